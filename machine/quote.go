package machine

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// isControl reports whether r is a character a terminal may act on rather
// than show: C0 controls, DEL and C1 controls.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// HasControl reports whether s holds a control character or a byte that
// is not UTF-8.
func HasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, isControl)
}

// EscapeControl returns s with every control character and every byte
// that is not UTF-8 written as a backslash escape (\n, \t, \r, \e, \xNN,
// \u0085), and backslashes doubled only when something was escaped, so
// text printed from a path, an id or a file never moves the cursor,
// rewrites the line or changes the terminal. Text without them is returned
// as it is.
func EscapeControl(s string) string {
	if !HasControl(s) {
		return s
	}
	return escapeText(s)
}

// escapeText writes every control character and byte that is not UTF-8
// in s as an escape, and every backslash doubled: EscapeControl and
// ShowName differ only in when they call it.
func escapeText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// ShellWord quotes s as one word of a command line printed for a person to
// paste, always quoted: single quotes, or, when s holds control characters
// or bytes that are not UTF-8, a POSIX printf that spells each of them as
// an octal escape ("$(printf -- 'a\012b')"), so the printed line has none
// and pasting it into any POSIX shell (sh, dash, bash, zsh) passes exactly
// s, running nothing else. The one exception is a run of newlines that ends
// s: command substitution would drop it, so it is printed as it is, inside
// single quotes.
func ShellWord(s string) string {
	if !HasControl(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	body := strings.TrimRight(s, "\n")
	tail := s[len(body):]
	var b strings.Builder
	if body != "" {
		b.WriteString(`"$(printf -- '`)
		for i := 0; i < len(body); {
			r, n := utf8.DecodeRuneInString(body[i:])
			switch {
			case r == utf8.RuneError && n == 1 || isControl(r):
				for _, c := range []byte(body[i : i+n]) {
					fmt.Fprintf(&b, `\%03o`, c)
				}
			case r == '\\':
				b.WriteString(`\\`)
			case r == '%':
				b.WriteString(`%%`)
			case r == '\'':
				b.WriteString(`'\''`)
			default:
				b.WriteString(body[i : i+n])
			}
			i += n
		}
		b.WriteString(`')"`)
	}
	if tail != "" {
		b.WriteString("'" + tail + "'")
	}
	return b.String()
}

// QuoteArg quotes s as one word of a command line printed for a person to
// paste: as it is when it is made only of letters, digits and / . - _
// (a --flag=VALUE keeps its flag bare and quotes the value), else as
// ShellWord quotes it. It is the one quoting of printed commands;
// Command builds a whole line with it.
func QuoteArg(s string) string {
	if flag, val, ok := strings.Cut(s, "="); ok && strings.HasPrefix(flag, "--") && plainWord(flag) {
		return flag + "=" + QuoteArg(val)
	}
	if !plainWord(s) {
		return ShellWord(s)
	}
	return s
}

// plainWord reports whether s is a word no shell reads as more than its
// letters: not empty, only letters, digits and / . - _.
func plainWord(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '-' || r == '_')
	})
}

// Command returns argv as one command line for a person to paste, each
// word quoted by QuoteArg: pasted into a POSIX shell it runs exactly argv,
// whatever a tree's name, a path or a ref holds. Every command custody
// prints (retry lines, advice, next steps, commands named in a message)
// is built here or by CommandAgain; a test scans the source for values
// spliced into command text any other way. Lines joined by a shell
// operator (" && ", " | ") are joined by the caller from Command's lines.
func Command(argv ...string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = QuoteArg(a)
	}
	return strings.Join(words, " ")
}

// CommandOn is Command of argv followed by operands (record ids, archive
// ids, paths): when one of them begins with "-", "--" goes before them,
// so the command reads it as an operand, never as a flag. argv holds the
// program, its subcommand and its flags.
func CommandOn(argv []string, operands ...string) string {
	words := slices.Clone(argv)
	for _, o := range operands {
		if strings.HasPrefix(o, "-") {
			words = append(words, "--")
			break
		}
	}
	return Command(append(words, operands...)...)
}
