package machine

import "testing"

func TestAbbrev(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"0123456789abcdef0123", QuotedCommit, "0123456"},
		{"0123456789abcdef0123", ShortCommit, "0123456789ab"},
		{"0123456789abcdef0123", ShortDigest, "0123456789abcdef"},
		{"abc", ShortCommit, "abc"},
		{"", ShortDigest, ""},
		{"0123456789ab", ShortCommit, "0123456789ab"},
	} {
		if got := Abbrev(c.s, c.n); got != c.want {
			t.Errorf("Abbrev(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
