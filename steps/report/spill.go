package report

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// rowSpill keeps the report's rows on disk, in the order they are read,
// each record's rows chained: a row is written with room for the offset of
// its record's next row, which is filled in when that row comes. A
// record's timeline is then read back whole and in journal order, however
// its entries interleave with others', while memory holds only each
// record's first and last offsets (decision 0254).
type rowSpill struct {
	f      *os.File
	end    int64
	chains map[string]*rowChain
}

// rowChain is where one record's rows begin and end in the spill.
type rowChain struct{ first, last int64 }

// rowHeader is a row's header on disk: the next row's offset plus one (0:
// none yet) and the length of the row's JSON.
const rowHeader = 12

func newRowSpill() (*rowSpill, error) {
	f, err := os.CreateTemp("", "custody-report-*")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &rowSpill{f: f, chains: map[string]*rowChain{}}, nil
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
	c := s.chains[record]
	if c == nil {
		s.chains[record] = &rowChain{first: at, last: at}
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

// rows calls fn with record's rows, in the order they were put.
func (s *rowSpill) rows(record string, fn func(machine.ReportRow) error) error {
	c := s.chains[record]
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
