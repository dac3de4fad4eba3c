//go:build !failpoint

package main

import "time"

// clock is the time every command reads: the system clock. Builds with the
// failpoint tag (tests only) may set it with CUSTODY_NOW (clock_failpoint.go).
func clock() func() time.Time { return time.Now }
