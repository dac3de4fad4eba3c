package report

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"slices"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// rowSpill keeps the report's rows on disk, in the order they are read,
// each record's rows chained: a row is written with room for the offset of
// its record's next row, which is filled in when that row comes. A
// record's timeline is then read back whole and in journal order, however
// its entries interleave with others', while memory holds only each
// record's first and last offsets. The sections machine.Audit hands back
// (records tombstoned) are kept in the same file until the page is written
// (decision 0254).
type rowSpill struct {
	f   *os.File
	end int64
	// index maps a record to its place in chains: values, not pointers,
	// so each record costs its id and a few words (decision 0254).
	index  map[string]int32
	chains []rowChain
}

// rowChain is what the spill knows of one record: where its rows begin
// and end, where its section is shelved (plus one; 0 while the audit
// holds it) and the group it is shown in. Chains are made in the order
// records are first seen, so a chain's place in rowSpill.chains orders
// the records by their first entries.
type rowChain struct {
	first, last int64
	shelf       int64
	group       int32
}

// rowHeader is a row's header on disk: the next row's offset plus one (0:
// none yet) and the length of the row's JSON.
const rowHeader = 12

func newRowSpill() (*rowSpill, error) {
	f, err := os.CreateTemp("", "custody-report-*")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &rowSpill{f: f, index: map[string]int32{}}, nil
}

// close removes the spill.
func (s *rowSpill) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// put appends row to record's chain.
func (s *rowSpill) put(record string, row machine.ReportRow) error {
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	buf := make([]byte, rowHeader+len(b))
	binary.BigEndian.PutUint32(buf[8:12], uint32(len(b)))
	copy(buf[rowHeader:], b)
	at := s.end
	if _, err := s.f.WriteAt(buf, at); err != nil {
		return fmt.Errorf("report spill: %w", err)
	}
	s.end += int64(len(buf))
	c := s.chain(record)
	if c == nil {
		s.index[record] = int32(len(s.chains))
		s.chains = append(s.chains, rowChain{first: at, last: at, group: -1})
		return nil
	}
	var next [8]byte
	binary.BigEndian.PutUint64(next[:], uint64(at)+1)
	if _, err := s.f.WriteAt(next[:], c.last); err != nil {
		return fmt.Errorf("report spill: %w", err)
	}
	c.last = at
	return nil
}

// chain is what the spill knows of record, nil when it has no row.
func (s *rowSpill) chain(record string) *rowChain {
	i, ok := s.index[record]
	if !ok {
		return nil
	}
	return &s.chains[i]
}

// rows calls fn with record's rows, in the order they were put.
func (s *rowSpill) rows(record string, fn func(machine.ReportRow) error) error {
	c := s.chain(record)
	if c == nil {
		return nil
	}
	var head [rowHeader]byte
	for at := c.first + 1; at != 0; {
		if _, err := s.f.ReadAt(head[:], at-1); err != nil {
			return fmt.Errorf("report spill: %w", err)
		}
		b := make([]byte, binary.BigEndian.Uint32(head[8:12]))
		if _, err := s.f.ReadAt(b, at-1+rowHeader); err != nil {
			return fmt.Errorf("report spill: %w", err)
		}
		var row machine.ReportRow
		if err := json.Unmarshal(b, &row); err != nil {
			return fmt.Errorf("report spill: %w", err)
		}
		if err := fn(row); err != nil {
			return err
		}
		at = int64(binary.BigEndian.Uint64(head[:8]))
	}
	return nil
}

// shelve keeps sec, which the audit handed back, until the page is
// written. Its record has a row already.
func (s *rowSpill) shelve(sec machine.ReportSection) error {
	b, err := json.Marshal(sec)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf[:4], uint32(len(b)))
	copy(buf[4:], b)
	at := s.end
	if _, err := s.f.WriteAt(buf, at); err != nil {
		return fmt.Errorf("report spill: %w", err)
	}
	s.end += int64(len(buf))
	s.chain(sec.Record).shelf = at + 1
	return nil
}

// shelved reads the section shelved for record; false when it has none.
func (s *rowSpill) shelved(record string) (machine.ReportSection, bool, error) {
	var sec machine.ReportSection
	c := s.chain(record)
	if c == nil || c.shelf == 0 {
		return sec, false, nil
	}
	var n [4]byte
	if _, err := s.f.ReadAt(n[:], c.shelf-1); err != nil {
		return sec, false, fmt.Errorf("report spill: %w", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := s.f.ReadAt(b, c.shelf-1+4); err != nil {
		return sec, false, fmt.Errorf("report spill: %w", err)
	}
	if err := json.Unmarshal(b, &sec); err != nil {
		return sec, false, fmt.Errorf("report spill: %w", err)
	}
	return sec, true, nil
}

// take reads the section shelved for record and forgets it: the audit
// holds it again.
func (s *rowSpill) take(record string) (machine.ReportSection, bool, error) {
	sec, ok, err := s.shelved(record)
	if ok {
		s.chain(record).shelf = 0
	}
	return sec, ok, err
}

// eachShelved calls fn with every shelved section, in no set order.
func (s *rowSpill) eachShelved(fn func(sec machine.ReportSection) error) error {
	for rec, i := range s.index {
		if s.chains[i].shelf == 0 {
			continue
		}
		sec, _, err := s.shelved(rec)
		if err != nil {
			return err
		}
		if err := fn(sec); err != nil {
			return err
		}
	}
	return nil
}

// setGroup says which group record is shown in.
func (s *rowSpill) setGroup(record string, group int32) {
	if c := s.chain(record); c != nil {
		c.group = group
	}
}

// members lists the records shown in group, in the order they began.
func (s *rowSpill) members(group int32) []string {
	type m struct {
		first int32
		rec   string
	}
	var ms []m
	for rec, i := range s.index {
		if s.chains[i].group == group {
			ms = append(ms, m{i, rec})
		}
	}
	slices.SortFunc(ms, func(a, b m) int { return cmp.Compare(a.first, b.first) })
	out := make([]string, len(ms))
	for i, x := range ms {
		out[i] = x.rec
	}
	return out
}
