package report

import (
	"fmt"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

// TestRowSpillChains: rows put in any interleaving are read back per
// record, whole and in the order they were put; a record never put reads
// as empty.
func TestRowSpillChains(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order string // one record name per row, in journal order
	}{
		{"one record", "aaaa"},
		{"interleaved", "abab"},
		{"one then the other", "aaabbb"},
		{"a record between another's rows", "abbbbba"},
		{"many records", "abcdefgabcdefgaz"},
		{"empty record name (repository events)", "a_a_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newRowSpill()
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			want := map[string][]uint64{}
			for i, c := range tc.order {
				rec := string(c)
				if rec == "_" {
					rec = ""
				}
				seq := uint64(i + 1)
				if err := s.put(rec, machine.ReportRow{Seq: seq, Outcome: fmt.Sprintf("row %d of %q", seq, rec)}); err != nil {
					t.Fatal(err)
				}
				want[rec] = append(want[rec], seq)
			}
			want["never"] = nil
			for rec, seqs := range want {
				var got []uint64
				err := s.rows(rec, func(r machine.ReportRow) error {
					if r.Outcome != fmt.Sprintf("row %d of %q", r.Seq, rec) {
						t.Errorf("row %d of %q reads %q", r.Seq, rec, r.Outcome)
					}
					got = append(got, r.Seq)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(seqs, got); d != "" {
					t.Errorf("rows of %q (-want +got):\n%s", rec, d)
				}
			}
		})
	}
}
