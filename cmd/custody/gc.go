package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target custody runs with unless
// GOGC says otherwise: a command lives for seconds at most and its live
// heap is a few megabytes (one tree's listing per worker at a time), so
// letting the heap grow to five times that before collecting costs little
// memory and spares plan about a tenth of its CPU on a fleet, spent
// marking listings that die right after each tree (decision 0075).
const gcPercent = 400

// tuneGC sets gcPercent when the environment does not set GOGC.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
