package store_test

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/store"
	bolt "go.etcd.io/bbolt"
)

// TestCheckTypedRecordOfEveryKind: a record whose common fields (id,
// state, revision) are sound but whose kind's own field has the wrong type
// is a problem, for every kind the default schema registers with its Go
// record type — archives included, which the check once did not decode.
func TestCheckTypedRecordOfEveryKind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		bucket, key, value, where string
	}{
		{"records", "a-000001", `{"id":"a-000001","state":"tombstoned","rev":1,"path":7}`, "record a-000001"},
		{"ledger", "a-000001/db", `{"id":"a-000001/db","state":"tombstoned","rev":1,"handle":7}`, "resource a-000001/db"},
		{store.NameArchives, "ar-000001", `{"id":"ar-000001","state":"tombstoned","rev":1,"record":7}`, "archive ar-000001"},
	} {
		t.Run(tt.bucket, func(t *testing.T) {
			t.Parallel()
			s := openPlain(t)
			boltUpdate(t, s.Path(), func(tx *bolt.Tx) error {
				return tx.Bucket([]byte(tt.bucket)).Put([]byte(tt.key), []byte(tt.value))
			})
			var got []store.Problem
			for _, p := range mustCheck(t, s) {
				if p.Where == tt.where {
					got = append(got, p)
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0].What, "does not parse: ") {
				t.Errorf("Check's problems with %s = %v, want one that says it does not parse", tt.where, got)
			}
		})
	}
}
