// Package outpath writes a file the user named on the command line.
//
// A missing or regular destination is replaced whole: written beside it and
// renamed over it, so a reader never sees half a file. A destination that
// exists and is not a regular file — a character or block device, a FIFO —
// is written through, opened and written as a shell's > would, and is never
// renamed over or removed: /dev/null stays a device. A symlink destination,
// a directory or a socket is refused with an error naming what it is; it is
// never followed, so a link planted in a shared directory cannot redirect a
// write made as root.
package outpath
