package machine

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// unshow reads text written by ShowName back into the bytes it names: the
// reader a person applies, written from ShowName's documentation.
func unshow(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("a lone backslash ends %q", s)
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 'x':
			v, err := strconv.ParseUint(s[i+1:min(i+3, len(s))], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape in %q", s)
			}
			b.WriteByte(byte(v))
			i += 2
		case 'u':
			v, err := strconv.ParseUint(s[i+1:min(i+5, len(s))], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			b.WriteRune(rune(v))
			i += 4
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}

func TestShowName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/path é":      "plain/path é",
		`back\slash`:        `back\\slash`,
		`literal\x80`:       `literal\\x80`,
		"byte\x80":          `byte\x80`,
		"a\nb":              `a\nb`,
		"x\x1b[2Jy":         `x\e[2Jy`,
		"tab\tcr\r\\":       `tab\tcr\r\\`,
		"nel\u0085del\x7f":  `nel\u0085del\x7f`,
		"<script>|`*_`":     "<script>|`*_`",
		"":                  "",
		"\xc3":              `\xc3`,
		"\xc3\xa9 is é":     "é is é",
		"nul\x00and\x01bel": `nul\x00and\x01bel`,
	} {
		if got := ShowName(in); got != want {
			t.Errorf("ShowName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShowNameIsOneToOne: random byte strings (every byte, backslashes
// and escape-like text weighted in) are shown as one line of valid UTF-8
// without control characters, and reading the text back gives the bytes.
func TestShowNameIsOneToOne(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(229, 1))
	pieces := []string{`\`, `\x80`, `\n`, `\\`, "\n", "\x80", "é", "\u0085", "|", "`", "<"}
	seen := map[string]string{}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(10) {
			if r.IntN(3) == 0 {
				b.WriteString(pieces[r.IntN(len(pieces))])
			} else {
				b.WriteByte(byte(r.IntN(256)))
			}
		}
		s := b.String()
		shown := ShowName(s)
		if !utf8.ValidString(shown) || HasControl(shown) {
			t.Fatalf("ShowName(%q) = %q holds a control character or a byte that is not UTF-8", s, shown)
		}
		back, err := unshow(shown)
		if err != nil || back != s {
			t.Fatalf("ShowName(%q) = %q reads back as %q (%v)", s, shown, back, err)
		}
		if prev, ok := seen[shown]; ok && prev != s {
			t.Fatalf("ShowName(%q) = ShowName(%q) = %q", s, prev, shown)
		}
		seen[shown] = s
	}
}

// unmarkdown is the text CommonMark renders for s when s holds no markup:
// each backslash before ASCII punctuation dropped. It fails when an
// unescaped character of markdown's syntax or a line break is left.
func unmarkdown(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0:
			i++
			b.WriteByte(s[i])
		case strings.IndexByte(markdownActive, c) >= 0, c == '\n', c == '\r':
			return "", fmt.Errorf("%q holds %q unescaped at %d", s, c, i)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func TestMarkdownText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"x-1a2b3c":                    "x-1a2b3c",
		"a|b":                         `a\|b`,
		"<script>alert(1)</script>":   `\<script\>alert(1)\</script\>`,
		"`code` **b** _i_ ~~s~~":      "\\`code\\` \\*\\*b\\*\\* \\_i\\_ \\~\\~s\\~\\~",
		"[l](http://x) ![i](y) &amp;": `\[l\](http://x) \!\[i\](y) \&amp;`,
		"a\nb\\c":                     `a\\nb\\\\c`,
		"$x$ # h":                     `\$x\$ \# h`,
		"caf\xe9":                     `caf\\xe9`,
	} {
		if got := MarkdownText(in); got != want {
			t.Errorf("MarkdownText(%q) = %q, want %q", in, got, want)
		}
	}
	r := rand.New(rand.NewPCG(229, 2))
	for range 5000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = markdownActive[r.IntN(len(markdownActive))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		md := MarkdownText(string(b))
		text, err := unmarkdown(md)
		if err != nil {
			t.Fatalf("MarkdownText(%q): %v", b, err)
		}
		if text != ShowName(string(b)) {
			t.Fatalf("MarkdownText(%q) = %q renders %q, not ShowName's %q", b, md, text, ShowName(string(b)))
		}
	}
}
