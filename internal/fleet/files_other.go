//go:build !unix

package fleet

import "os"

// keyOf has no inode to go by: a file is known by its name only, so a
// rotation that renames the live file is seen as a new file.
func keyOf(os.FileInfo) fileKey { return fileKey{} }
