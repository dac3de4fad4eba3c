package agents

import (
	"strings"
)

// A script in environment.toml is a TOML string, written in one of four
// forms. custody's line goes into it by inserting bytes between its
// delimiters, never by rewriting it, so every byte of the person's script
// (its quoting, escapes, comments and line ends) stays, and taking the
// line out again gives those bytes back exactly.
//
// Where the line goes: first, so that it runs whatever the rest of the
// script does (an exit, set -e, a failing command); after a first line that
// is a #! line, which must stay first. What separates it from the person's
// script: a line end in a multi-line string, "; " in a one-line string
// (which cannot hold a raw line end); nothing when the script is empty.
//
// A script runs custody when one of its lines starts with custody's line
// and the rest of that line is blank or begins with ";". Placed anywhere
// (a person may move it after their own cleanup), it counts, and integrate
// adds nothing.

// codexStringForm is how a TOML string is written.
type codexStringForm struct {
	delim     string // ", ', """ or '''
	multiLine bool
}

// codexForm reads the form of a raw string value (delimiters included).
func codexForm(raw string) (codexStringForm, bool) {
	for _, d := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(raw, d) && strings.HasSuffix(raw, d) && len(raw) >= 2*len(d) {
			return codexStringForm{delim: d, multiLine: len(d) == 3}, true
		}
	}
	return codexStringForm{}, false
}

// codexContent returns the offsets, within raw, of a string value's
// content: after the opening delimiter (and, in a multi-line string, the
// line end TOML trims right after it), before the closing one.
func codexContent(raw string, f codexStringForm) (start, end int) {
	start, end = len(f.delim), len(raw)-len(f.delim)
	if f.multiLine {
		switch {
		case strings.HasPrefix(raw[start:end], "\r\n"):
			start += 2
		case strings.HasPrefix(raw[start:end], "\n"):
			start++
		}
	}
	return start, end
}

// codexRunsLine reports whether script (decoded) has a line that is line:
// it starts with line, and the rest is blank or begins with ";".
func codexRunsLine(script, line string) bool {
	for _, l := range strings.Split(script, "\n") {
		if codexLineIs(strings.TrimSuffix(l, "\r"), line) {
			return true
		}
	}
	return false
}

// codexLineIs reports whether l (one line, no line end) is line followed by
// blanks, or by ";" and anything.
func codexLineIs(l, line string) bool {
	rest, ok := strings.CutPrefix(l, line)
	return ok && (strings.TrimSpace(rest) == "" || strings.HasPrefix(rest, ";"))
}

// codexInsertAt says where, within a raw string value, custody's line goes
// and what is inserted there. eol is the line end for a multi-line string.
func codexInsertAt(raw string, f codexStringForm, line, eol string) (at int, text string) {
	start, end := codexContent(raw, f)
	content := raw[start:end]
	if !f.multiLine {
		if content == "" {
			return start, line
		}
		return start, line + "; "
	}
	at = start
	if strings.HasPrefix(content, "#!") {
		i := strings.IndexByte(content, '\n')
		if i < 0 {
			return end, eol + line
		}
		at = start + i + 1
	}
	if content == "" {
		return at, line
	}
	return at, line + eol
}

// codexMerged is the decoded script with custody's line put in as
// codexInsertAt puts it: what the person is offered, and what the file
// must decode to after the edit.
func codexMerged(script, line string, multiLine bool) string {
	if !multiLine {
		if script == "" {
			return line
		}
		return line + "; " + script
	}
	at := 0
	if strings.HasPrefix(script, "#!") {
		i := strings.IndexByte(script, '\n')
		if i < 0 {
			return script + "\n" + line
		}
		at = i + 1
	}
	if script == "" {
		return line
	}
	return script[:at] + line + "\n" + script[at:]
}

// codexCut finds the bytes of s (raw string content, or a decoded script)
// that are custody's line as codexInsertAt put it: the line at a line
// start, with the "; " or line end after it, or (at the very end of s) the
// line end before it. ok is false when no line of s is line.
func codexCut(s, line string) (from, to int, ok bool) {
	for at := 0; at <= len(s); {
		end := strings.IndexByte(s[at:], '\n')
		lineEnd := len(s)
		if end >= 0 {
			lineEnd = at + end
		}
		l := strings.TrimSuffix(s[at:lineEnd], "\r")
		if codexLineIs(l, line) {
			after := at + len(line)
			switch {
			case strings.HasPrefix(s[after:], "; "):
				return at, after + 2, true
			case strings.HasPrefix(s[after:], ";"):
				return at, after + 1, true
			case strings.HasPrefix(s[after:], "\r\n"):
				return at, after + 2, true
			case strings.HasPrefix(s[after:], "\n"):
				return at, after + 1, true
			case after == len(s) && at > 0 && strings.HasSuffix(s[:at], "\r\n"):
				return at - 2, after, true
			case after == len(s) && at > 0:
				return at - 1, after, true
			default:
				return at, after, true
			}
		}
		if end < 0 {
			break
		}
		at = lineEnd + 1
	}
	return 0, 0, false
}

// codexUnmerged is script (decoded) with custody's line taken out as
// codexCut takes it; ok is false when it has none.
func codexUnmerged(script, line string) (string, bool) {
	from, to, ok := codexCut(script, line)
	if !ok {
		return script, false
	}
	return script[:from] + script[to:], true
}
