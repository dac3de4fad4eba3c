package machine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// discern's tokens (seed 000, ADR 0025), kept so a command moved from its
// [worktree.db] or [worktree.dev_server] table runs unchanged:
//
//   - @db@ is the worktree's database name, underscore-safe (DBName of
//     "<slug>-<id>"): an unquoted SQL identifier.
//   - @site@ is the worktree's dev-server name, DNS-label-safe (SiteLabel
//     of "<slug>-<id>"): one RFC 1123 label, as a host name's first part.
//   - @worktree@ is the worktree's id (the same value as @id@), discern's
//     name for the worktree's identity.
//
// Each is one value per worktree, shared by its resources, as discern's
// one database and one dev server were. They are frozen like every other
// token (Freeze): a reference to CUSTODY_DB, CUSTODY_SITE, CUSTODY_WORKTREE.

// MaxLabel is the longest DNS label (RFC 1035 §2.3.4) and the longest
// identifier PostgreSQL keeps.
const MaxLabel = 63

// digestLen is the hex digits of the sha256 of the name a label that is not
// the name itself ends with: 40 bits, so two names meet by chance once in a
// trillion pairs, never because one was cut or folded like the other.
const digestLen = 10

// LegacyTokens returns the values of @db@, @site@ and @worktree@ for the
// worktree id of the project slug.
func LegacyTokens(slug, id string) map[string]string {
	return map[string]string{
		"db":       DBName(slug + "-" + id),
		"site":     SiteLabel(slug + "-" + id),
		"worktree": id,
	}
}

// SiteLabel returns name as one DNS label (RFC 1123): 1 to 63 bytes of
// [a-z0-9-], neither first nor last a dash. Upper case ASCII letters are
// folded; every run of other bytes (punctuation, blanks, non-ASCII, bytes
// that are not UTF-8) becomes one dash. A name that is already such a label
// is its own label. Any other name (folded, replaced, cut or empty) gets
// "-" and the first 10 hex digits of the sha256 of its bytes, after at most
// 52 bytes of what it became, so two names that fold or cut alike still get
// different labels.
func SiteLabel(name string) string {
	return label(name, '-', false)
}

// DBName returns name as an unquoted SQL identifier (PostgreSQL, MySQL,
// SQLite): 1 to 63 bytes of [a-z0-9_], first a letter, last not an
// underscore. Dashes become underscores; otherwise it is made as SiteLabel
// makes a label (a name that is not exactly its identifier but for its
// dashes gets "_" and a digest), and one that would start with a digit
// starts with "db_".
func DBName(name string) string {
	return label(name, '_', true)
}

// label is SiteLabel (sep '-') or DBName (sep '_', letterFirst).
func label(name string, sep byte, letterFirst bool) string {
	var b strings.Builder
	run := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			if !run && b.Len() > 0 {
				b.WriteByte(sep)
			}
			run = true
			continue
		}
		b.WriteByte(c)
		run = false
	}
	s := strings.TrimRight(b.String(), string(sep))
	if letterFirst && s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "db" + string(sep) + s
	}
	exact := s == name
	if sep == '_' {
		exact = s == strings.ReplaceAll(name, "-", "_")
	}
	if exact && s != "" && len(s) <= MaxLabel {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	digest := hex.EncodeToString(sum[:])[:digestLen]
	keep := MaxLabel - digestLen - 1
	if len(s) > keep {
		s = strings.TrimRight(s[:keep], string(sep))
	}
	switch {
	case s != "":
		return s + string(sep) + digest
	case letterFirst:
		return "db" + string(sep) + digest
	default:
		return digest
	}
}
