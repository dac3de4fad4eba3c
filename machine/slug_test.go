package machine_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"feature", "feature"},
		{"Feature Login", "feature-login"},
		{"fix/BUG-123", "fix-bug-123"},
		{"  --Hello__World--  ", "hello-world"},
		{"a   b\t\nc", "a-b-c"},
		{"123", "123"},
		{"café au lait", "caf-au-lait"},
		{"İstanbul", "istanbul"},
		{"\u212Aelvin", "kelvin"}, // KELVIN SIGN lowers to k
		{"ÄÖÜ", "wt"},
		{"", "wt"},
		{"!!!", "wt"},
		{"-", "wt"},
		{"../../etc/passwd", "etc-passwd"},
		{strings.Repeat("a", 50), strings.Repeat("a", machine.MaxSlug)},
		{strings.Repeat("a", 40), strings.Repeat("a", 40)},
		// Cut at 40 leaves a trailing dash, which is trimmed.
		{strings.Repeat("a", 39) + " bcd", strings.Repeat("a", 39)},
		// The cut is by bytes, so it may split a word.
		{strings.Repeat("ab ", 20), strings.Repeat("ab-", 13) + "a"},
	}
	for _, tt := range tests {
		if got := machine.Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWorktreeID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		random [3]byte
		want   string
	}{
		{"Feature Login", [3]byte{0xa1, 0xb2, 0xc3}, "feature-login-a1b2c3"},
		{"", [3]byte{}, "wt-000000"},
		{"x", [3]byte{0xff, 0xff, 0xff}, "x-ffffff"},
		{strings.Repeat("z", 60), [3]byte{1, 2, 3}, strings.Repeat("z", 40) + "-010203"},
	}
	for _, tt := range tests {
		got := machine.WorktreeID(tt.name, tt.random)
		if got != tt.want {
			t.Errorf("WorktreeID(%q, %x) = %q, want %q", tt.name, tt.random, got, tt.want)
		}
		if !machine.ValidID(got) {
			t.Errorf("ValidID(%q) = false for an id WorktreeID made", got)
		}
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want bool
	}{
		{"feature-login-a1b2c3", true},
		{"wt-000000", true},
		{"a-ffffff", true},
		{"9-123456", true},
		{strings.Repeat("a", 40) + "-abcdef", true},
		{strings.Repeat("a", 41) + "-abcdef", false},
		{"", false},
		{"a1b2c3", false},
		{"-a1b2c3", false},
		{"feat-", false},
		{"feat-A1B2C3", false},
		{"feat-a1b2c", false},
		{"feat-a1b2c3d", false},
		{"feat-zzzzzz", false},
		{"feat-a1b2c ", false},
		{"Feat-a1b2c3", false},
		{"feat--a1b2c3", false},
		{"feat login-a1b2c3", false},
		{"../x-a1b2c3", false},
		{"feat/x-a1b2c3", false},
	}
	for _, tt := range tests {
		if got := machine.ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestIsFullCommit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want bool
	}{
		{strings.Repeat("0", 40), true},
		{"0123456789abcdef0123456789abcdef01234567", true},
		{strings.Repeat("f", 64), true},
		{"", false},
		{strings.Repeat("a", 39), false},
		{strings.Repeat("a", 41), false},
		{strings.Repeat("a", 63), false},
		{strings.Repeat("a", 65), false},
		{strings.Repeat("A", 40), false},
		{strings.Repeat("a", 39) + "g", false},
		{strings.Repeat("a", 39) + " ", false},
		{"HEAD", false},
		{strings.Repeat("a", 38) + "é", false}, // 40 bytes, 39 runes
	}
	for _, tt := range tests {
		if got := machine.IsFullCommit(tt.s); got != tt.want {
			t.Errorf("IsFullCommit(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"", "Feature Login", "fix/BUG-123", "ÄÖÜ", "İstanbul", strings.Repeat("a-", 30), "\xff\xfe", "--x--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s := machine.Slug(name)
		if !slugRE.MatchString(s) || len(s) > machine.MaxSlug {
			t.Fatalf("Slug(%q) = %q: not a slug of at most %d bytes", name, s, machine.MaxSlug)
		}
		if again := machine.Slug(s); again != s {
			t.Fatalf("Slug is not idempotent: Slug(%q) = %q", s, again)
		}
		id := machine.WorktreeID(name, [3]byte{0xde, 0xad, 0x01})
		if !machine.ValidID(id) {
			t.Fatalf("ValidID(WorktreeID(%q)) = false for %q", name, id)
		}
	})
}
