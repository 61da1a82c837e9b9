// Package hookhttp is the smallest HTTP/1.1 server an agent's HTTP hooks
// need: POST requests on 127.0.0.1, a token header checked in constant
// time, routed by path (/hook; later /v1/logs beside it), the body handed
// over, an empty 200 answered at once. It exists so that lcwrap does not
// pay net/http's start-up cost on every invocation (measured:
// docs/design.md, "Decisions").
//
// It promises bounded reads (header and body sizes, a deadline per
// request), a short deadline for a connection's first whole authenticated
// request, and a connection cap at which the oldest unauthenticated
// connection is closed first; every connection or request it refuses is
// passed to the caller's reject, to be counted. It never blocks the poster
// on the handler's work beyond handing the body over, and keeps serving
// through failed accepts (too many open files: retried with a backoff,
// counted); it refuses everything else (no TLS, no redirects, no methods
// but POST, no path it was not given).
package hookhttp
