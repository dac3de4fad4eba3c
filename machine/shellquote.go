package machine

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
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
var tokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_]*@`) })

// Tokens returns every @token@ name in a command template, in order.
func Tokens(template string) []string {
	var out []string
	for _, m := range tokenRE().FindAllString(template, -1) {
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
	for _, loc := range tokenRE().FindAllStringIndex(cmd, -1) {
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

// TokenEnv is the environment variable that carries the value of the token
// name to a frozen command: @dir@ is read from CUSTODY_DIR.
func TokenEnv(name string) string { return "CUSTODY_" + strings.ToUpper(name) }

// TokenEnvOf returns vals keyed by TokenEnv: the environment frozen with
// the commands Freeze returns.
func TokenEnvOf(vals map[string]string) map[string]string {
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		out[TokenEnv(k)] = v
	}
	return out
}

// UnsafeTokenError is returned by Freeze when a @token@ stands where no
// reference to its value can keep the shell from reading the value as code.
type UnsafeTokenError struct {
	// Token is the @token@ as written.
	Token string
	// Context names where it stands ("a quoted heredoc", …).
	Context string
}

// Error says which token stands where, and what to write instead.
func (e *UnsafeTokenError) Error() string {
	name := strings.Trim(e.Token, "@")
	return fmt.Sprintf("%s stands in %s, where its value would be read as code; write \"$%s\" (custody sets it for every resource command) or move the token out", e.Token, e.Context, TokenEnv(name))
}

// frame is one nesting level of the shell lexer Freeze runs.
type frame int

const (
	fTop      frame = iota // command level: unquoted words
	fSingle                // '…'
	fDouble                // "…"
	fCmdSub                // $(…)
	fBacktick              // `…`
	fArith                 // $((…))
	fParamTop              // ${…} outside double quotes
	fParamDQ               // ${…} inside double quotes or a heredoc
	fHeredoc               // the body of <<WORD
	fHeredocQ              // the body of <<'WORD': nothing is expanded
	fComment               // # … to the end of the line
)

// topLike frames parse words as at command level.
func (f frame) topLike() bool { return f == fTop || f == fCmdSub || f == fBacktick || f == fParamTop }

// plainValue matches a value that is the same text to any interpreter a
// single-quoted string is usually handed to (sh -c, psql -c): no quote,
// blank, $, backtick, backslash, ;, &, |, <, >, (, ), *, ?, [, # or newline.
var plainValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:,+=@%-]*$`) })

// number matches a decimal number, the only value arithmetic may read.
var number = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) })

// tokenAt matches an @token@ at the start of its input.
var tokenAt = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@[A-Za-z_][A-Za-z0-9_]*@`) })

type heredoc struct {
	delim  string
	quoted bool
	strip  bool // <<-: leading tabs are stripped
}

// Freeze returns template with every @token@ named in vals replaced by a
// reference to the environment variable TokenEnv(token), in the form that
// is data where the token stands: "${CUSTODY_X}" in an unquoted word (also
// inside $(…), backticks and ${…}), ${CUSTODY_X} inside double quotes and
// an unquoted heredoc, '"${CUSTODY_X}"' inside single quotes when the
// value is plain (plainValue). The values themselves never enter the
// text, so no value is ever parsed as shell and a value that looks like
// a token (a path holding @dir@) is data. A token inside a quoted heredoc,
// inside single quotes with a value that is not plain, or inside $((…))
// with a value that is not a number is refused (*UnsafeTokenError): there
// the value would reach an interpreter as code. Unknown tokens stay as they
// are, so the frozen command is refused (Unexpanded).
func Freeze(template string, vals map[string]string) (string, error) {
	var b strings.Builder
	stack := []frame{fTop}
	depth := []int{0} // open parentheses per frame (cmdsub, arith)
	var pending []heredoc
	var body heredoc
	top := func() frame { return stack[len(stack)-1] }
	push := func(f frame) { stack, depth = append(stack, f), append(depth, 0) }
	pop := func() {
		if len(stack) > 1 {
			stack, depth = stack[:len(stack)-1], depth[:len(depth)-1]
		}
	}
	wordStart := func(i int) bool {
		return i == 0 || strings.IndexByte(" \t\n;&|()", template[i-1]) >= 0
	}
	startBody := func() {
		if len(pending) > 0 {
			body, pending = pending[0], pending[1:]
			if body.quoted {
				push(fHeredocQ)
			} else {
				push(fHeredoc)
			}
		}
	}
	for i := 0; i < len(template); {
		f := top()
		// A heredoc body line equal to its delimiter ends the body.
		if (f == fHeredoc || f == fHeredocQ) && (i == 0 || template[i-1] == '\n') {
			end := strings.IndexByte(template[i:], '\n')
			line := template[i:]
			if end >= 0 {
				line = template[i : i+end]
			}
			if body.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == body.delim {
				n := len(template) - i
				if end >= 0 {
					n = end + 1
				}
				b.WriteString(template[i : i+n])
				i += n
				pop()
				startBody()
				continue
			}
		}
		if m := tokenAt().FindString(template[i:]); m != "" {
			if v, ok := vals[m[1:len(m)-1]]; ok {
				ref := "${" + TokenEnv(m[1:len(m)-1]) + "}"
				switch {
				case f.topLike() || f == fComment:
					b.WriteString(`"` + ref + `"`)
				case f == fDouble || f == fParamDQ || f == fHeredoc:
					b.WriteString(ref)
				case f == fSingle && plainValue().MatchString(v):
					b.WriteString(`'"` + ref + `"'`)
				case f == fSingle:
					return "", &UnsafeTokenError{Token: m, Context: "single quotes (its value is not plain text)"}
				case f == fArith && number().MatchString(v):
					b.WriteString(ref)
				case f == fArith:
					return "", &UnsafeTokenError{Token: m, Context: "$((…)) (its value is not a number)"}
				default: // fHeredocQ
					return "", &UnsafeTokenError{Token: m, Context: "a quoted heredoc (<<'" + body.delim + "')"}
				}
				i += len(m)
				continue
			}
		}
		c := template[i]
		next := byte(0)
		if i+1 < len(template) {
			next = template[i+1]
		}
		n := 1
		switch {
		case f == fSingle:
			if c == '\'' {
				pop()
			}
		case f == fHeredocQ:
		case f == fComment:
			if c == '\n' {
				pop()
				n = 0 // the newline is the enclosing frame's
			}
		case c == '\\':
			if next != 0 && next != '@' {
				n = 2
			}
		case c == '$' && next == '(' && i+2 < len(template) && template[i+2] == '(':
			push(fArith)
			n = 3
		case c == '$' && next == '(':
			push(fCmdSub)
			n = 2
		case c == '$' && next == '{':
			if f == fDouble || f == fHeredoc || f == fParamDQ {
				push(fParamDQ)
			} else {
				push(fParamTop)
			}
			n = 2
		case c == '`' && f == fBacktick:
			pop()
		case c == '`':
			push(fBacktick)
		case f == fDouble:
			if c == '"' {
				pop()
			}
		case f == fHeredoc:
		case f == fArith:
			switch {
			case c == '(':
				depth[len(depth)-1]++
			case c == ')' && depth[len(depth)-1] > 0:
				depth[len(depth)-1]--
			case c == ')' && next == ')':
				pop()
				n = 2
			}
		case f == fParamTop || f == fParamDQ:
			switch c {
			case '}':
				pop()
			case '\'':
				if f == fParamTop {
					push(fSingle)
				}
			case '"':
				push(fDouble)
			}
		default: // top-like: fTop, fCmdSub, fBacktick
			switch {
			case c == '\'':
				push(fSingle)
			case c == '"':
				push(fDouble)
			case c == '#' && wordStart(i):
				push(fComment)
			case c == '(' && f == fCmdSub:
				depth[len(depth)-1]++
			case c == ')' && f == fCmdSub && depth[len(depth)-1] > 0:
				depth[len(depth)-1]--
			case c == ')' && f == fCmdSub:
				pop()
			case c == '<' && next == '<':
				h, used := readHeredocWord(template[i+2:])
				pending = append(pending, h)
				n = 2 + used
			case c == '\n':
				b.WriteByte(c)
				i++
				startBody()
				continue
			}
		}
		if n > 0 {
			b.WriteString(template[i : i+n])
		}
		i += n
	}
	return b.String(), nil
}

// readHeredocWord reads the delimiter after <<: an optional -, blanks, then
// a word whose quotes are removed. Any quoting makes the heredoc quoted.
func readHeredocWord(s string) (heredoc, int) {
	var h heredoc
	i := 0
	if i < len(s) && s[i] == '-' {
		h.strip = true
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	var w strings.Builder
	for i < len(s) && strings.IndexByte(" \t\n;&|<>()", s[i]) < 0 {
		switch c := s[i]; c {
		case '\'', '"':
			h.quoted = true
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				w.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '\\':
			h.quoted = true
			if i+1 < len(s) {
				w.WriteByte(s[i+1])
			}
			i += 2
		default:
			w.WriteByte(c)
			i++
		}
	}
	h.delim = w.String()
	return h, min(i, len(s))
}
