//go:build !linux

package store

import bolt "go.etcd.io/bbolt"

// dropMapped returns a func that does nothing: what a read touched stays
// mapped here.
func dropMapped(*bolt.Tx) func() { return func() {} }
