package gitfiles

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// ObjectFormat is a repository's object hash: "sha1" or "sha256".
type ObjectFormat string

// The object formats git supports.
const (
	FormatSHA1   ObjectFormat = "sha1"
	FormatSHA256 ObjectFormat = "sha256"
)

// FormatOf returns the object format whose hex ids are as long as oid, or
// "" for any other length.
func FormatOf(oid string) ObjectFormat {
	switch len(oid) {
	case 40:
		return FormatSHA1
	case 64:
		return FormatSHA256
	}
	return ""
}

// BlobID returns the git blob id of data: the hash of "blob <len>\0" and
// the bytes, in the given object format.
func BlobID(format ObjectFormat, data []byte) string {
	h := NewHash(format)
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func NewHash(format ObjectFormat) hash.Hash {
	if format == FormatSHA256 {
		return sha256.New()
	}
	return sha1.New()
}
