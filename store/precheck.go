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
		ok                 bool
		txid, need         uint64
		freelist, pageSize uint64
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
			best.freelist, best.pageSize = binary.LittleEndian.Uint64(m[32:]), ps
		}
	}
	if !best.ok {
		return fmt.Errorf("%s: %w (no valid bbolt meta page)", path, ErrCorrupt)
	}
	if uint64(size) < best.need {
		return fmt.Errorf("%s: %w (the file is truncated: %d bytes, its meta page needs %d)", path, ErrCorrupt, size, best.need)
	}
	if best.freelist != noFreelist {
		if why := checkFreelistPage(f, best.freelist, best.pageSize, uint64(size)); why != "" {
			return fmt.Errorf("%s: %w (%s)", path, ErrCorrupt, why)
		}
	}
	return nil
}

// noFreelist is bbolt's freelist page id when the freelist is not stored.
const noFreelist = ^uint64(0)

// checkFreelistPage validates the header of the freelist page, which bbolt
// reads (and panics on, leaving the file locked) whenever it opens the file
// for writing.
func checkFreelistPage(f *os.File, pgid, pageSize, size uint64) string {
	const freelistFlag = 0x10
	off := pgid * pageSize
	if pageSize == 0 || off+pageHeaderSize+8 > size {
		return fmt.Sprintf("the freelist page %d lies past the end of the file", pgid)
	}
	h := make([]byte, pageHeaderSize+8)
	if _, err := f.ReadAt(h, int64(off)); err != nil {
		return "the freelist page cannot be read: " + err.Error()
	}
	id := binary.LittleEndian.Uint64(h[0:])
	flags := binary.LittleEndian.Uint16(h[8:])
	count := uint64(binary.LittleEndian.Uint16(h[10:]))
	overflow := uint64(binary.LittleEndian.Uint32(h[12:]))
	if id != pgid || flags != freelistFlag {
		return fmt.Sprintf("page %d is not a freelist page (id %d, flags %#x)", pgid, id, flags)
	}
	extra := uint64(0)
	if count == 0xFFFF {
		count = binary.LittleEndian.Uint64(h[pageHeaderSize:])
		extra = 8
	}
	if pageHeaderSize+extra+count*8 > (overflow+1)*pageSize || off+(overflow+1)*pageSize > size {
		return fmt.Sprintf("the freelist page %d holds %d ids, more than fit", pgid, count)
	}
	return ""
}
