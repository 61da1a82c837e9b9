// Package lazy holds values made on their first use. A Value's zero
// state is static data, so declaring one costs a process nothing at
// start-up: package initialisation, which every lcwrap process pays
// before its first line of work, runs no code for it. It promises that
// Make runs at most once and that every Get after it returns the same
// value; it says nothing about the value itself.
package lazy
