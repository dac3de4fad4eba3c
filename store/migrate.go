package store

import bolt "go.etcd.io/bbolt"

// Migrator is what a Migration may do inside the upgrade's transaction.
type Migrator struct {
	tx *bolt.Tx
}

// defaultMigrations lists custody's own migrations, oldest first.
func defaultMigrations() []Migration { return nil }
