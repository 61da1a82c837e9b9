// Package journal is lcwrap's append-only, lock-protected JSONL store,
// line-compatible with the contract's reference writer.
//
// PLACEHOLDER: the lock protocol, integrity checks, checkpoint and the
// verify/repair operations are being built (issue 4). The API below is
// stable: Open, (*Journal).Append, (*Journal).Close, DefaultPath.
package journal
