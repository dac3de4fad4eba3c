package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// bbolt's on-disk layout (go.etcd.io/bbolt internal/common). Every page
// starts with a 16-byte header: id (8), flags (2), count (2), overflow (4).
// A meta page then holds magic, version, page size, flags, the root bucket
// (root page id and sequence), the freelist page id, the high-water page
// id, the transaction id and an FNV-64a checksum of the fields before it.
// A branch page holds count elements {pos, ksize uint32; pgid uint64}, a
// leaf page count elements {flags, pos, ksize, vsize uint32}; pos is
// relative to the element. A leaf element flagged as a bucket holds
// {root pgid, sequence uint64}, followed by an inline page when root is 0.
const (
	boltMagic      = 0xED0CDAED
	pageHeaderSize = 16
	metaSumOffset  = 56 // bytes of meta covered by the checksum
	elementSize    = 16 // branch and leaf elements are both 16 bytes
	bucketHeader   = 16 // root pgid and sequence of a bucket value

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10
	leafIsBucket = 0x01

	// maxTreeDepth bounds the B+tree depth (and bucket nesting) precheck
	// accepts; custody's stores are a few levels deep.
	maxTreeDepth = 64
)

// precheck refuses a state file that bbolt could crash or hang on, before
// bbolt maps it. bbolt trusts every page id it reads: a page past the end
// of a truncated file raises SIGBUS, a page that points to itself makes a
// cursor loop or recurse until the process dies, and neither is a panic a
// recover could catch. So precheck
//   - refuses anything but a regular file at path (a FIFO would block the
//     open, a device would be read forever, a directory or symlink is not
//     a state file), without opening it first (lstat, then an O_NONBLOCK,
//     O_NOFOLLOW open checked again with fstat);
//   - finds the meta page bbolt will use (the valid one with the highest
//     transaction id, as bbolt's DB.meta picks it, trying the page sizes
//     bbolt tries when the first meta is damaged);
//   - walks every page reachable from that meta's root bucket, and for a
//     write (readOnly false) the freelist page, checking that each lies
//     inside the file and below the high-water mark, carries the right
//     flags and its own id, that its elements and their keys and values
//     lie inside it, and that no page is reached twice.
//
// A read-only open never loads the freelist, so a damaged freelist does
// not stop read-only commands.
//
// The pages are read under the file's shared lock, which wait takes on
// the opened file (Store.open waits for it as for bbolt's): a custody
// writing the file holds its exclusive lock for as long as it has it
// open, so precheck never reads pages another process is writing, and
// never calls a healthy file damaged because it read it halfway through a
// commit.
//
// known, when not nil, is what this process last knew sound of the file:
// when it stands for the file found now, the walk is skipped. precheck
// returns what it found sound (nil when the platform cannot identify the
// file, or it trusted known), and what stands for the file as this open
// found it: found, known when trusted, or nil.
func precheck(path string, readOnly bool, wait func(*os.File) error, known *checked) (found, stands *checked, err error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, nil // bbolt (or OpenWith) reports it
	}
	if err := notRegular(path, fi.Mode()); err != nil {
		return nil, nil, err
	}
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		if isCorrupt(err) {
			return nil, nil, err
		}
		return nil, nil, nil // bbolt reports it
	}
	defer f.Close() // and so releases the shared lock
	if err := wait(f); err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err != nil {
		return nil, nil, nil
	}
	size := uint64(fi.Size())
	if size == 0 {
		return nil, nil, fmt.Errorf("%s: %w (the file is empty)", path, ErrCorrupt)
	}
	m, ok := bestMeta(f, size)
	if !ok {
		return nil, nil, fmt.Errorf("%s: %w (no valid bbolt meta page)", path, ErrCorrupt)
	}
	if size < m.hwm*m.pageSize {
		return nil, nil, fmt.Errorf("%s: %w (the file is truncated: %d bytes, its meta page needs %d)", path, ErrCorrupt, size, m.hwm*m.pageSize)
	}
	id, identified := statID(fi)
	if identified && known.trusts(id, m.txid, readOnly) {
		return nil, known, nil
	}
	if identified && !readOnly && known.trusts(id, m.txid, true) {
		// Walked for reading (the freelist unread), now opened to write:
		// the freelist page is all that is left to check.
		if m.freelist != noFreelist {
			if why := checkFreelistPage(f, m.freelist, m.pageSize, size); why != "" {
				return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrCorrupt, why)
			}
		}
		c := *known
		c.freelist = true
		return &c, &c, nil
	}
	walkedAt := time.Now()
	data, release, drop := filePages(f, min(size, m.hwm*m.pageSize))
	defer release()
	w := &walker{f: f, data: data, drop: drop, dropEvery: dropEvery, size: size, ps: m.pageSize, hwm: m.hwm, seen: map[uint64]bool{}}
	why, faulted := walkMapped(w, m.root)
	if faulted {
		return nil, nil, fmt.Errorf("%s: %w (the file was cut short while custody read it; nothing was changed: run the command again)", path, ErrUnreadable)
	}
	if why != "" {
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrCorrupt, why)
	}
	if !readOnly && m.freelist != noFreelist {
		if why := checkFreelistPage(f, m.freelist, m.pageSize, size); why != "" {
			return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrCorrupt, why)
		}
	}
	if !identified {
		return nil, nil, nil
	}
	c := &checked{id: id, txid: m.txid, freelist: !readOnly, walkedAt: walkedAt}
	return c, c, nil
}

// walkMapped walks the tree below root, reporting faulted when reading
// the mapped file faulted (it was truncated under the walk) instead of
// letting the fault end the process.
func walkMapped(w *walker, root uint64) (why string, faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(interface{ Addr() uintptr }); ok && e != nil {
				why, faulted = "", true
				return
			}
			panic(p)
		}
	}()
	return w.tree(root, 0, nil), false
}

// notRegular refuses a state file that is not a regular file. A symbolic
// link is ErrUnreadable (custody does not follow it; the file it names,
// if any, may be a good store that must not be moved aside); a FIFO, a
// device, a socket or a directory is ErrCorrupt (it is no store at all).
// Either way nothing was opened for reading, so nothing blocks.
func notRegular(path string, m fs.FileMode) error {
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return fmt.Errorf("%s: %w: it is a symbolic link to %s, not a regular file; custody does not follow it: replace the link with the file it names", path, ErrUnreadable, to)
	}
	return fmt.Errorf("%s: %w (it is %s, not a regular file)", path, ErrCorrupt, fileKind(m))
}

// fileKind names a non-regular file's type for a refusal.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// openRegular opens path without following a symlink and without blocking
// on a FIFO, and refuses (ErrCorrupt) what is not a regular file once open.
// It is also the OpenFile bbolt uses, so the file bbolt maps is the one
// precheck checked the type of.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = notRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// boltOpenFile is bbolt's Options.OpenFile: openRegular with bbolt's flags.
func boltOpenFile(path string, flag int, _ os.FileMode) (*os.File, error) {
	return openRegular(path, flag)
}

// isCorrupt reports whether err is one of notRegular's refusals.
func isCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnreadable) }

// meta is what precheck needs of a valid meta page.
type meta struct {
	pageSize, root, freelist, hwm, txid uint64
}

// bestMeta returns the meta page bbolt will use, found the way bbolt
// finds it: the page size is the first meta page's, or when that page is
// damaged the one of the first valid meta page at 1 KiB to 16 MiB, or
// else the OS page size; the two meta pages are then pages 0 and 1 of
// that size, and the valid one with the higher transaction id wins (the
// first on a tie). Both meta pages must lie inside the file, since bbolt
// reads both.
func bestMeta(f *os.File, size uint64) (meta, bool) {
	m0, ok0 := readMeta(f, 0)
	ps := m0.pageSize
	if !ok0 {
		ps = uint64(os.Getpagesize())
		for i := 0; i <= 14; i++ {
			pos := uint64(1024) << i
			if pos+1024 >= size {
				break
			}
			if m, ok := readMeta(f, pos); ok {
				ps = m.pageSize
				break
			}
		}
	}
	if ps < 512 || 2*ps > size {
		return meta{}, false
	}
	m1, ok1 := readMeta(f, ps)
	for _, m := range []*meta{&m0, &m1} {
		m.pageSize = ps // bbolt addresses pages by the size it found
	}
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, !ok0 && ok1:
		return m1, true
	case ok0:
		return m0, true
	}
	return meta{}, false
}

// readMeta reads and validates the meta page at off.
func readMeta(f *os.File, off uint64) (meta, bool) {
	buf := make([]byte, pageHeaderSize+metaSumOffset+8)
	if n, err := f.ReadAt(buf, int64(off)); n < len(buf) && err != nil {
		return meta{}, false
	}
	m := buf[pageHeaderSize:]
	if binary.LittleEndian.Uint32(m[0:]) != boltMagic || binary.LittleEndian.Uint32(m[4:]) != 2 {
		return meta{}, false
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if h.Sum64() != binary.LittleEndian.Uint64(m[metaSumOffset:]) {
		return meta{}, false
	}
	ps := uint64(binary.LittleEndian.Uint32(m[8:]))
	return meta{
		pageSize: ps,
		root:     binary.LittleEndian.Uint64(m[16:]),
		freelist: binary.LittleEndian.Uint64(m[32:]),
		hwm:      binary.LittleEndian.Uint64(m[40:]),
		txid:     binary.LittleEndian.Uint64(m[48:]),
	}, true
}

// dropEvery is how many reads of mapped pages the walk makes between two
// drops of what it touched (at most about 8 MiB of 4 KiB pages, read
// about twice each: header, then body).
const dropEvery = 4096

// walker checks the pages of a bbolt B+tree. With emit set it also hands
// every key and value of every bucket to emit (the bucket named by its
// path from the root), and with tolerant set it notes a damaged subtree in
// lost and goes on with the rest instead of stopping: that is how doctor
// and salvage read what bbolt cannot.
type walker struct {
	f io.ReaderAt
	// data, when not nil, is the file's first bytes, mapped or read at
	// once (filePages).
	data []byte
	// drop, when not nil, drops the pages of data touched so far from the
	// process's memory; read calls it every dropEvery reads of data, so
	// the walk's resident memory does not grow with the file.
	drop          func()
	dropEvery     int
	touched       int
	size, ps, hwm uint64
	seen          map[uint64]bool
	emit          func(bucket []string, k, v []byte)
	tolerant      bool
	lost          []string
}

// read returns the n bytes of the file at off: a slice of data when the
// walk read the file's pages at once (never written to), else read now.
func (w *walker) read(off, n uint64) ([]byte, error) {
	if off+n <= uint64(len(w.data)) {
		if w.drop != nil {
			if w.touched++; w.touched%max(w.dropEvery, 1) == 0 {
				w.drop()
			}
		}
		return w.data[off : off+n : off+n], nil
	}
	buf := make([]byte, n)
	if _, err := w.f.ReadAt(buf, int64(off)); err != nil {
		return nil, err
	}
	return buf, nil
}

// child walks a subtree: its error ends the walk, or in tolerant mode is
// noted in lost (naming the bucket) and the walk goes on.
func (w *walker) child(why string, bucket []string) string {
	if why == "" || !w.tolerant {
		return why
	}
	where := "the root"
	if len(bucket) > 0 {
		where = "bucket " + strings.Join(bucket, "/")
	}
	w.lost = append(w.lost, where+": "+why)
	return ""
}

// tree checks the page pgid and every page below it, returning why it
// cannot be read safely ("" when it can).
func (w *walker) tree(pgid uint64, depth int, bucket []string) string {
	if depth > maxTreeDepth {
		return fmt.Sprintf("page %d lies deeper than %d levels", pgid, maxTreeDepth)
	}
	if pgid < 2 || pgid >= w.hwm {
		return fmt.Sprintf("a page id %d lies outside the file's pages 2 to %d", pgid, w.hwm-1)
	}
	if w.seen[pgid] {
		return fmt.Sprintf("page %d is reached twice (a loop or a shared page)", pgid)
	}
	w.seen[pgid] = true
	off := pgid * w.ps
	if off+w.ps > w.size {
		return fmt.Sprintf("page %d lies past the end of the file", pgid)
	}
	hdr, err := w.read(off, pageHeaderSize)
	if err != nil {
		return fmt.Sprintf("page %d cannot be read: %v", pgid, err)
	}
	if id := binary.LittleEndian.Uint64(hdr); id != pgid {
		return fmt.Sprintf("page %d carries the id %d", pgid, id)
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	span := (overflow + 1) * w.ps
	if pgid+overflow+1 > w.hwm || off+span > w.size {
		return fmt.Sprintf("page %d and its %d overflow pages lie past the end of the file", pgid, overflow)
	}
	for p := pgid + 1; p <= pgid+overflow; p++ {
		if w.seen[p] {
			return fmt.Sprintf("page %d is reached twice (an overflow page of page %d)", p, pgid)
		}
		w.seen[p] = true
	}
	buf, err := w.read(off, span)
	if err != nil {
		return fmt.Sprintf("page %d cannot be read: %v", pgid, err)
	}
	return w.page(buf, fmt.Sprintf("page %d", pgid), depth, bucket)
}

// page checks one page held in buf (a page of the file with its overflow,
// or an inline bucket's page), named where.
func (w *walker) page(buf []byte, where string, depth int, bucket []string) string {
	if depth > maxTreeDepth {
		return fmt.Sprintf("%s lies deeper than %d levels", where, maxTreeDepth)
	}
	if len(buf) < pageHeaderSize {
		return where + " is shorter than a page header"
	}
	flags := binary.LittleEndian.Uint16(buf[8:])
	count := uint64(binary.LittleEndian.Uint16(buf[10:]))
	if flags != flagBranch && flags != flagLeaf {
		return fmt.Sprintf("%s is neither a branch nor a leaf page (flags %#x)", where, flags)
	}
	if pageHeaderSize+count*elementSize > uint64(len(buf)) {
		return fmt.Sprintf("%s holds %d elements, more than fit", where, count)
	}
	if flags == flagBranch && count == 0 {
		return where + " is a branch page without elements"
	}
	for i := uint64(0); i < count; i++ {
		at := pageHeaderSize + i*elementSize
		e := buf[at : at+elementSize]
		if flags == flagBranch {
			pos, ksize := uint64(binary.LittleEndian.Uint32(e[0:])), uint64(binary.LittleEndian.Uint32(e[4:]))
			if at+pos+ksize > uint64(len(buf)) {
				return fmt.Sprintf("%s: the key of element %d lies outside the page", where, i)
			}
			if why := w.child(w.tree(binary.LittleEndian.Uint64(e[8:]), depth+1, bucket), bucket); why != "" {
				return why
			}
			continue
		}
		eflags := binary.LittleEndian.Uint32(e[0:])
		pos := uint64(binary.LittleEndian.Uint32(e[4:]))
		ksize := uint64(binary.LittleEndian.Uint32(e[8:]))
		vsize := uint64(binary.LittleEndian.Uint32(e[12:]))
		if at+pos+ksize+vsize > uint64(len(buf)) {
			return fmt.Sprintf("%s: the key or value of element %d lies outside the page", where, i)
		}
		key := buf[at+pos : at+pos+ksize]
		v := buf[at+pos+ksize : at+pos+ksize+vsize]
		if eflags&leafIsBucket == 0 {
			if w.emit != nil {
				w.emit(bucket, key, v)
			}
			continue
		}
		sub := append(bucket[:len(bucket):len(bucket)], string(key))
		if len(v) < bucketHeader {
			return fmt.Sprintf("%s: bucket %q has a value of %d bytes", where, buf[at+pos:at+pos+ksize], len(v))
		}
		root := binary.LittleEndian.Uint64(v)
		var why string
		if w.emit != nil {
			w.emit(sub, nil, v[:bucketHeader]) // the bucket (root, sequence), even if empty
		}
		if root == 0 {
			why = w.page(v[bucketHeader:], fmt.Sprintf("the inline bucket %q", key), depth+1, sub)
		} else {
			why = w.tree(root, depth+1, sub)
		}
		if why = w.child(why, sub); why != "" {
			return why
		}
	}
	return ""
}

// noFreelist is bbolt's freelist page id when the freelist is not stored.
const noFreelist = ^uint64(0)

// checkFreelistPage validates the header of the freelist page, which bbolt
// reads (and panics on, leaving the file locked) whenever it opens the file
// for writing.
func checkFreelistPage(f *os.File, pgid, pageSize, size uint64) string {
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
	if id != pgid || flags != flagFreelist {
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
