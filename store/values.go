package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// GetValue decodes the JSON value under key in one of the schema's buckets
// that hold no records (plans, approvals) into into. It reports false, and
// leaves into alone, when there is no such key.
func (s *Store) GetValue(bucket, key string, into any) (bool, error) {
	if !s.schema.hasPlainBucket(bucket) {
		return false, fmt.Errorf("%w (%s is not a bucket values are read from)", ErrUnknownKind, bucket)
	}
	var found bool
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return fmt.Errorf("%s: %w (no %s bucket)", s.path, ErrCorrupt, bucket)
		}
		v := b.Get([]byte(key))
		if v == nil {
			return nil
		}
		found = true
		if err := json.Unmarshal(v, into); err != nil {
			return fmt.Errorf("%s: %w (%s/%s does not parse: %v)", s.path, ErrCorrupt, bucket, key, err)
		}
		return nil
	})
	return found, err
}

// DeleteValue is the side write that removes key from one of the schema's
// buckets that hold no records (a revoked approval); a missing key is no
// error.
func DeleteValue(bucket, key string) SideWrite {
	return SideWrite{name: "delete " + bucket + "/" + key, apply: func(tx *bolt.Tx, s *Store) error {
		if !s.schema.hasPlainBucket(bucket) {
			return fmt.Errorf("%w (%s is not a bucket side writes may use)", ErrUnknownKind, bucket)
		}
		return tx.Bucket([]byte(bucket)).Delete([]byte(key))
	}}
}
