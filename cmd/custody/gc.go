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

// reportHeapLimit is the soft limit on the Go heap journal report runs
// with unless GOMEMLIMIT says otherwise. The report keeps a few words per
// record the journal names (decision 0254): with gcPercent, a heap of
// five times that could outgrow what the report needs many times over
// on a journal of hundreds of thousands of records, so past this limit
// the collector runs as often as it must. It is a soft limit: a live heap
// above it is never refused.
const reportHeapLimit = 40 << 20

// boundReportHeap sets reportHeapLimit when the environment does not set
// GOMEMLIMIT.
func boundReportHeap() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(reportHeapLimit)
	}
}
