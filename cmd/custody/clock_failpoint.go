//go:build failpoint

package main

import (
	"os"
	"time"
)

// clock is the time every command reads. In builds with the failpoint tag,
// which only tests make, CUSTODY_NOW=<RFC 3339 time> sets it, so a test can
// step past a lease's expiry without sleeping; an ordinary build never reads
// the variable.
func clock() func() time.Time {
	at, err := time.Parse(time.RFC3339Nano, os.Getenv("CUSTODY_NOW"))
	if err != nil {
		return time.Now
	}
	return func() time.Time { return at }
}
