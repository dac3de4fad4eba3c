package machine

import (
	"strconv"
	"strings"
)

// PortEnvKey is the .env variable holding a worktree's deterministic port
// (the value of @port@ in its resource commands).
const PortEnvKey = "CUSTODY_PORT"

// DotenvLines are exactly the lines custody owns in worktree rec's .env:
// its id, its port (when it has one), then each of its resources' handles
// as the ledger holds them (EnvLines). A .env holding only these lines is
// custody's to regenerate; any other line is the person's.
func DotenvLines(rec Record, rs []Resource) []string {
	lines := EnvLines(rec.ID, rs)
	if rec.Port == 0 {
		return lines
	}
	out := make([]string, 0, len(lines)+1)
	out = append(out, lines[0], PortEnvKey+"="+strconv.Itoa(rec.Port))
	return append(out, lines[1:]...)
}

// dotenvBare are the bytes a .env value may hold unquoted: no dotenv
// reader, shell or compose file gives any of them a meaning.
const dotenvBare = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:/@%+=-"

// DotenvValue writes v as the value of one .env line: never more than one
// line or one variable for any reader (a POSIX shell's source, docker
// compose, python-dotenv, node's dotenv), and read back as v:
//   - bare, when v is made only of letters, digits and _.,:/@%+=- (every
//     id custody makes, every handle and port);
//   - else in single quotes, which every reader takes literally (no $
//     expansion, no # comment, no escape), when v holds no single quote
//     and no line break;
//   - else in double quotes with \, ", $ and ` backslash-escaped, as a
//     shell reads them, and a line break written \n or \r, as python-dotenv,
//     compose and node read it (a shell cannot read one from one line: it
//     reads the two characters), so a newline in v never ends the line and
//     starts another variable. No id custody records holds a line break
//     (git names admin entries without one).
func DotenvValue(v string) string {
	bare := v != ""
	for i := 0; i < len(v) && bare; i++ {
		bare = strings.IndexByte(dotenvBare, v[i]) >= 0
	}
	switch {
	case bare:
		return v
	case !strings.ContainsAny(v, "'\n\r"):
		return "'" + v + "'"
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', '"', '$', '`':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
