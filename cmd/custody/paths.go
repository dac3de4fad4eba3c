package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// pathView shows paths, and the commands printed for pasting, to the
// person who runs custody, from the directory they run it in: the
// process's current directory, never -C's (what they paste runs where
// they are). JSON keeps every path absolute; only human output goes
// through a pathView (docs/decisions/0250-output-that-fits.md).
type pathView struct {
	// cwd is the process's current directory, symbolic links resolved
	// ("" when unknown: every path is then shown as it is).
	cwd string
	// main is the repository's main checkout.
	main string
	// near are more directories (the managed root) from inside which a
	// path may climb with ../ as from inside main.
	near []string
	// chdir is -C DIR as the person gave it, set only when DIR is another
	// directory than cwd: a printed custody or git command that runs
	// where custody ran gets -C chdir, so it runs there when pasted where
	// the person is.
	chdir string
}

// pathView is the view of paths from where the person runs custody, for
// the repository whose main checkout is mainCheckout; near are other
// directories of the repository (the managed root).
func (a *App) pathView(mainCheckout string, near ...string) pathView {
	v := pathView{main: mainCheckout, near: near}
	cwd, err := os.Getwd()
	if err != nil {
		return v
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	v.cwd = cwd
	if c := a.Globals.Chdir; c != "" {
		dir := c
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if filepath.Clean(dir) != cwd {
			v.chdir = c
		}
	}
	return v
}

// show is p as a person reads it (relative), its control characters and
// bytes that are not UTF-8 escaped so it stays on its line.
func (v pathView) show(p string) string { return machine.EscapeControl(v.relative(p)) }

// relative is p relative to where the person is, when that is simpler:
// below the current directory it is always relative (.worktrees/x-1a2b3c);
// above or beside it, it climbs with ../ only when the person works inside
// the repository (its main checkout or managed root) and the relative form
// is no longer than the absolute one; otherwise it stays absolute. A
// relative path that would begin with "-" begins with "./", so no command
// reads it as an option.
func (v pathView) relative(p string) string {
	if v.cwd == "" || p == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(v.cwd, p)
	if err != nil {
		return p
	}
	up := rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
	if up && (!v.inside() || len(rel) > len(p)) {
		return p
	}
	if strings.HasPrefix(rel, "-") {
		rel = "." + string(filepath.Separator) + rel
	}
	return rel
}

// inside reports whether the person works inside the repository: the
// current directory is the main checkout, the managed root or below one.
func (v pathView) inside() bool {
	if v.main != "" && isWithin(v.cwd, v.main) {
		return true
	}
	for _, d := range v.near {
		if d != "" && isWithin(v.cwd, d) {
			return true
		}
	}
	return false
}

// isWithin reports whether p is dir or lies below it.
func isWithin(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// refusal is r as a person reads it from where they are: the tree's path
// (tree, "" for none) relative in its message, its retry made to paste
// there (command).
func (v pathView) refusal(tree string, r machine.Refusal) *machine.Refusal {
	out := r
	out.Message = v.replacePath(r.Message, tree)
	out.Retry = v.command(retryOf(&r), tree, v.main)
	return &out
}

// replacePath is text with each mention of the absolute path p, whole or
// as the start of a path below it, shown relative.
func (v pathView) replacePath(text, p string) string {
	if p == "" {
		return text
	}
	rel := v.relative(p)
	if rel == p {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, p)
		if i < 0 {
			break
		}
		end := i + len(p)
		b.WriteString(text[:i])
		if end == len(text) || strings.IndexByte("/ :;,)", text[end]) >= 0 {
			b.WriteString(rel)
		} else {
			b.WriteString(p) // a longer name that begins with p
		}
		text = text[end:]
	}
	b.WriteString(text)
	return b.String()
}

// message is r's message with the tree's path shown as v shows it, and
// without the leading path the item line already names.
func (v pathView) message(it machine.PlanItem, r *machine.Refusal) string {
	msg := r.Message
	if it.Path == "" {
		return msg
	}
	if rest, ok := strings.CutPrefix(msg, it.Path+" "); ok {
		msg = rest
	}
	return machine.EscapeControl(v.replacePath(msg, it.Path))
}

// command is a command line printed for pasting (a retry, a next step),
// made to work when pasted where the person is, and as short as that
// allows:
//
//   - a word naming one of paths (absolute, quoted by machine.QuoteArg)
//     is the path relative to the person's directory (relative), where
//     the command resolves it there: the DIR of git -C DIR or custody -C
//     DIR, or any path of a command run without -C. The other paths of a
//     command run in another directory stay absolute, as they were;
//   - with chdir set (custody -C DIR), a git or custody command that runs
//     where custody ran (no -C, no --git-dir) gets -C DIR first.
//
// Words are read as a POSIX shell reads machine.Command's output (single
// quotes, "$(printf -- '...')", backslashes), so a quoted name that holds
// a space, a path or " && " is one word and is never rewritten; the
// commands of a line joined by &&, || and | are each taken on their own.
func (v pathView) command(line string, paths ...string) string {
	words := shellWords(line)
	if words == nil || strings.Join(words, " ") != line {
		return line // not a line machine.Command wrote: printed as it is
	}
	quoted := map[string]string{}
	for _, p := range paths {
		if p != "" && filepath.IsAbs(p) {
			quoted[machine.QuoteArg(p)] = machine.QuoteArg(v.relative(p))
		}
	}
	var out []string
	start := true // the next word begins a command
	// keepAbs: this command runs in another directory than the person's.
	keepAbs, afterC := false, false
	for i, w := range words {
		if start {
			start, keepAbs, afterC = false, false, false
			next := ""
			if i+1 < len(words) {
				next = words[i+1]
			}
			if w == "git" || w == "custody" {
				if next == "-C" || strings.HasPrefix(next, "--git-dir=") {
					keepAbs = true
				} else if v.chdir != "" {
					out = append(out, w, "-C", machine.QuoteArg(v.chdir))
					keepAbs = true
					continue
				}
			}
		}
		switch {
		case w == "&&" || w == "||" || w == "|" || w == ";":
			start = true
		case afterC:
			// git -C DIR and custody -C DIR resolve DIR where the person is.
			if r, ok := quoted[w]; ok {
				w = r
			}
		case !keepAbs:
			if r, ok := quoted[w]; ok {
				w = r
			} else if flag, val, ok := strings.Cut(w, "="); ok && strings.HasPrefix(flag, "--") {
				if r, ok := quoted[val]; ok {
					w = flag + "=" + r
				}
			}
		}
		afterC = w == "-C" && i > 0
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// shellWords splits a command line into its words as a POSIX shell reads
// them: at spaces outside single quotes, double quotes and command
// substitutions, a backslash escaping the next byte outside single quotes.
// Each word is returned as written. It returns nil for a line it cannot
// read whole (an unclosed quote), which is then printed as it is.
func shellWords(s string) []string {
	var words []string
	var stack []byte // open contexts: '\'' single, '"' double, '(' substitution
	top := func() byte {
		if len(stack) == 0 {
			return 0
		}
		return stack[len(stack)-1]
	}
	start := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if top() == 0 && c == ' ' {
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
		switch top() {
		case '\'':
			if c == '\'' {
				stack = stack[:len(stack)-1]
			}
		case '"':
			switch {
			case c == '\\':
				i++
			case c == '"':
				stack = stack[:len(stack)-1]
			case c == '$' && i+1 < len(s) && s[i+1] == '(':
				stack = append(stack, '(')
				i++
			}
		default: // outside quotes, or in a substitution
			switch {
			case c == '\\':
				i++
			case c == '\'' || c == '"':
				stack = append(stack, c)
			case c == '$' && i+1 < len(s) && s[i+1] == '(':
				stack = append(stack, '(')
				i++
			case c == ')' && top() == '(':
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return nil
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// resolvedPath is p with the symbolic links of its directory resolved, as
// pathView's cwd is, so the two compare ("" stays "").
func resolvedPath(p string) string {
	if p == "" {
		return ""
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}
