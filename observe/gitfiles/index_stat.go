package gitfiles

import "encoding/binary"

// StatData is the stat data an index entry records of its file when git
// last read it (git's struct stat_data and ce_mode): each field as git
// stores it, the low 32 bits of what lstat gave. Git takes a file whose
// lstat still gives all of these as unchanged without reading it, unless
// the entry is racily clean (Racy).
type StatData struct {
	CtimeSec, CtimeNsec uint32
	MtimeSec, MtimeNsec uint32
	Dev, Ino            uint32
	// Mode is the entry's mode as the index holds it (0100644, 0100755,
	// 0120000, 0160000), not the file's st_mode.
	Mode     uint32
	UID, GID uint32
	Size     uint32
}

// statDataAt reads the 40 bytes of stat data an entry starts with.
func statDataAt(b []byte) StatData {
	u := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i : 4*i+4]) }
	return StatData{
		CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
		Dev: u(4), Ino: u(5), Mode: u(6), UID: u(7), GID: u(8), Size: u(9),
	}
}

// Racy reports whether git would not trust s alone, as git's
// is_racy_timestamp does in a build without nanosecond stamps (git's
// default): the file's mtime is not older, in whole seconds, than the
// index file's (indexMtimeSec), so the file may have changed in the same
// second its stat data was taken. Git then reads the file; custody asks
// git.
func (s StatData) Racy(indexMtimeSec uint32) bool {
	return indexMtimeSec != 0 && indexMtimeSec <= s.MtimeSec
}

// EmptyBlobID is the id of the empty blob in format: an entry of size 0
// with another id was smudged by git (racily clean when the index was
// written), and git reads its file.
func EmptyBlobID(format ObjectFormat) string { return BlobID(format, nil) }
