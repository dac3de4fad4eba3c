package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's meta page layout (go.etcd.io/bbolt internal/common): a 16-byte
// page header, then magic, version, page size, flags, the root bucket (root
// page id and sequence), the freelist page id, the high-water page id, the
// transaction id and an FNV-64a checksum of the fields before it.
const (
	boltMagic      = 0xED0CDAED
	pageHeaderSize = 16
	metaSumOffset  = 56 // bytes of meta covered by the checksum
)

// precheck reads both meta pages of a bbolt file and refuses one whose valid
// meta says it needs more pages than the file holds. bbolt maps the file
// into memory, and reading a page past the end of a truncated file raises
// SIGBUS, which no recover can catch; so a truncated file must be refused
// before bbolt opens it.
func precheck(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // bbolt reports it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	size := fi.Size()
	if size == 0 {
		return fmt.Errorf("%s: %w (the file is empty)", path, ErrCorrupt)
	}
	buf := make([]byte, pageHeaderSize+metaSumOffset+8)
	var best struct {
		ok         bool
		txid, need uint64
	}
	var pageSize uint64
	for i := 0; i < 2; i++ {
		off := int64(0)
		if i == 1 {
			if pageSize == 0 {
				break
			}
			off = int64(pageSize)
		}
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			continue
		}
		m := buf[pageHeaderSize:]
		if binary.LittleEndian.Uint32(m[0:]) != boltMagic {
			continue
		}
		h := fnv.New64a()
		h.Write(m[:metaSumOffset])
		if h.Sum64() != binary.LittleEndian.Uint64(m[metaSumOffset:]) {
			continue
		}
		ps := uint64(binary.LittleEndian.Uint32(m[8:]))
		if i == 0 {
			pageSize = ps
		}
		txid := binary.LittleEndian.Uint64(m[48:])
		need := binary.LittleEndian.Uint64(m[40:]) * ps
		if !best.ok || txid > best.txid {
			best.ok, best.txid, best.need = true, txid, need
		}
	}
	if !best.ok {
		return fmt.Errorf("%s: %w (no valid bbolt meta page)", path, ErrCorrupt)
	}
	if uint64(size) < best.need {
		return fmt.Errorf("%s: %w (the file is truncated: %d bytes, its meta page needs %d)", path, ErrCorrupt, size, best.need)
	}
	return nil
}
