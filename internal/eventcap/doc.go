// Package eventcap is a test sink: it keeps every event an emitter writes,
// in order, so that a test can check them against the projection. It is
// for tests only; nothing in lcwrap writes through it.
//
// It promises that Check validates and projects every event in the order
// written; it claims nothing about events it was not given.
package eventcap
