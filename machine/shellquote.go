package machine

import (
	"regexp"
	"strings"
)

// quoting is where a position of a shell command stands.
type quoting int

const (
	unquoted quoting = iota
	inSingle
	inDouble
)

// scanQuoting reports, for each byte of cmd, whether it stands outside
// quotes, inside single quotes or inside double quotes (the characters
// that open and close a quote, and escaped characters, count as quoted).
func scanQuoting(cmd string) []quoting {
	q := make([]quoting, len(cmd))
	state, escaped := unquoted, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch state {
		case inSingle:
			q[i] = inSingle
			if c == '\'' {
				state = unquoted
			}
		case inDouble:
			q[i] = inDouble
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				state = unquoted
			}
		default:
			switch {
			case escaped: // a backslash-escaped character is literal
				q[i] = inSingle
				escaped = false
			case c == '\\':
				q[i], escaped = inSingle, true
			case c == '\'':
				q[i], state = inSingle, inSingle
			case c == '"':
				q[i], state = inDouble, inDouble
			default:
				q[i] = unquoted
			}
		}
	}
	return q
}

// tokenRE matches an @token@.
var tokenRE = regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_]*@`)

// Tokens returns every @token@ name in a command template, in order.
func Tokens(template string) []string {
	var out []string
	for _, m := range tokenRE.FindAllString(template, -1) {
		out = append(out, m[1:len(m)-1])
	}
	return out
}

// Unexpanded returns the first @token@ left in a frozen command outside
// single quotes, "" when there is none. custody writes every value it
// expands in quotes that make it literal, so a value that happens to look
// like a token (a path named mail@box@repo) is never taken for one when it
// stands in single quotes.
func Unexpanded(cmd string) string {
	q := scanQuoting(cmd)
	for _, loc := range tokenRE.FindAllStringIndex(cmd, -1) {
		single := false
		for i := loc[0]; i < loc[1]; i++ {
			if q[i] == inSingle {
				single = true
				break
			}
		}
		if !single {
			return cmd[loc[0]:loc[1]]
		}
	}
	return ""
}

// Expand replaces each @token@ of template named in vals with its value,
// quoted for where it stands: single-quoted outside quotes, escaped inside
// double quotes, and spliced with '\” inside single quotes, so the shell
// always sees exactly the value. Unknown tokens are left as they are.
func Expand(template string, vals map[string]string) string {
	q := scanQuoting(template)
	var b strings.Builder
	last := 0
	for _, loc := range tokenRE.FindAllStringIndex(template, -1) {
		v, ok := vals[template[loc[0]+1:loc[1]-1]]
		if !ok {
			continue
		}
		b.WriteString(template[last:loc[0]])
		switch q[loc[0]] {
		case inDouble:
			r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
			b.WriteString(r.Replace(v))
		case inSingle:
			b.WriteString(strings.ReplaceAll(v, "'", `'\''`))
		default:
			b.WriteString(QuoteValue(v))
		}
		last = loc[1]
	}
	b.WriteString(template[last:])
	return b.String()
}

// QuoteValue single-quotes v for the shell.
func QuoteValue(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
