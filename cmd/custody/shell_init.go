package main

import (
	"fmt"
	"strings"
)

// The shell function custody shell-init prints wraps the binary (command
// custody) so that custody switch and custody new change the shell's
// directory, and custody remove leaves a tree it removed from under the
// shell: a program cannot change its parent's. Every other command line
// runs the binary as it is, its output and exit status untouched.
//
// The function finds the command word as the binary does (global flags
// and their values skipped, decision 0241's leadingCommand): with --help,
// -h, --version or --json anywhere, an unknown flag first, or any other
// command, it only runs the binary. For switch, new and remove it runs the
// binary with CUSTODY_SHELL_FUNCTION set, takes its stdout whole (a
// trailing "x" keeps a path's trailing newlines from command substitution;
// fish reads it with string collect -N), prints it back for new, and
// changes into the path, the output without its one trailing newline: for
// switch and new on exit 0; for remove whenever it printed one, which it
// does only when the directory the shell stood in went with a tree (its
// report goes to stderr then), whatever became of the other trees. Every
// value stays quoted, so a path is never split or globbed.

// shellGlobals sorts the global flags for the function's case arms:
// passThrough are the spellings after which the binary's output is not a
// path (help, version, --json); withValue take the next word as their
// value; alone are words that are one global flag by themselves (a bool,
// --name=value, -Cvalue, as globs).
type shellGlobals struct {
	passThrough, withValue, alone []string
}

// shellGlobalsOf reads d's global flags into shellGlobals.
func shellGlobalsOf(d cliDoc) shellGlobals {
	g := shellGlobals{passThrough: []string{"--help", "-h", "--version"}}
	for _, f := range d.Globals {
		switch {
		case f.Name == "help" || f.Name == "version":
		case f.Name == "json":
			g.passThrough = append(g.passThrough, "--json", "--json=*")
		case f.Takes():
			g.withValue = append(g.withValue, f.spellings()...)
			g.alone = append(g.alone, "--"+f.Name+"=*")
			if f.Short != 0 {
				g.alone = append(g.alone, "-"+string(f.Short)+"?*")
			}
		default:
			g.alone = append(g.alone, "--"+f.Name)
		}
	}
	return g
}

// shGlob quotes a case pattern for sh: its literal part quoted, a
// trailing ?* or * left a glob.
func shGlob(p string) string {
	for _, glob := range []string{"?*", "*"} {
		if lit, ok := strings.CutSuffix(p, glob); ok {
			return shQuote(lit) + glob
		}
	}
	return shQuote(p)
}

// shGlobs joins case patterns for sh with |.
func shGlobs(pats []string) string {
	q := make([]string, len(pats))
	for i, p := range pats {
		q[i] = shGlob(p)
	}
	return strings.Join(q, "|")
}

// shellInitPOSIX is the function for bash and zsh, which read it alike.
func shellInitPOSIX(d cliDoc, shell, rc string) string {
	g := shellGlobalsOf(d)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s shell function for %s: %s; make it again with `%s shell-init %s`.\n", d.Name, shell, generatedNote, d.Name, shell)
	fmt.Fprintf(&b, "# Load it from %s with: eval \"$(%s shell-init %s)\"\n", rc, d.Name, shell)
	fmt.Fprintf(&b, "# It runs %s; %s switch and %s new also change into the tree, and\n", d.Name, d.Name, d.Name)
	fmt.Fprintf(&b, "# %s remove into the main checkout when it removed the tree the shell is in.\n", d.Name)
	fmt.Fprintf(&b, "%s() {\n", d.Name)
	b.WriteString("    local _custody_word=\"\" _custody_skip=\"\" _custody_arg _custody_out _custody_rc=0\n")
	b.WriteString("    for _custody_arg in \"$@\"; do\n")
	b.WriteString("        if [ -n \"$_custody_skip\" ]; then\n            _custody_skip=\"\"\n            continue\n        fi\n")
	b.WriteString("        case \"$_custody_arg\" in\n")
	fmt.Fprintf(&b, "        %s)\n            _custody_word=\"\"\n            break ;;\n", shGlobs(g.passThrough))
	b.WriteString("        '--') break ;;\n")
	if len(g.withValue) > 0 {
		fmt.Fprintf(&b, "        %s) _custody_skip=1 ;;\n", shGlobs(g.withValue))
	}
	if len(g.alone) > 0 {
		fmt.Fprintf(&b, "        %s) ;;\n", shGlobs(g.alone))
	}
	b.WriteString("        -*) [ -n \"$_custody_word\" ] || break ;;\n")
	b.WriteString("        *) [ -n \"$_custody_word\" ] || _custody_word=\"$_custody_arg\" ;;\n")
	b.WriteString("        esac\n    done\n")
	b.WriteString("    case \"$_custody_word\" in\n    switch|new|remove) ;;\n    *)\n")
	fmt.Fprintf(&b, "        command %s \"$@\"\n        return ;;\n    esac\n", d.Name)
	fmt.Fprintf(&b, "    _custody_out=\"$(%s=%s command %s \"$@\"; _custody_rc=$?; printf x; exit \"$_custody_rc\")\" || _custody_rc=$?\n", shellFunctionEnv, shell, d.Name)
	b.WriteString("    _custody_out=\"${_custody_out%x}\"\n")
	b.WriteString("    if [ \"$_custody_word\" = new ]; then\n        printf '%s' \"$_custody_out\"\n    fi\n")
	b.WriteString("    if [ \"$_custody_word\" = remove ]; then\n")
	b.WriteString("        _custody_out=${_custody_out%$'\\n'}\n")
	b.WriteString("        [ -z \"$_custody_out\" ] || builtin cd -- \"$_custody_out\"\n")
	b.WriteString("        return \"$_custody_rc\"\n    fi\n")
	b.WriteString("    [ \"$_custody_rc\" -eq 0 ] || return \"$_custody_rc\"\n")
	b.WriteString("    _custody_out=${_custody_out%$'\\n'}\n")
	b.WriteString("    [ -n \"$_custody_out\" ] || return 0\n")
	b.WriteString("    builtin cd -- \"$_custody_out\"\n}\n")
	return b.String()
}

// shellInitFish is the function for fish.
func shellInitFish(d cliDoc) string {
	g := shellGlobalsOf(d)
	fq := func(pats []string) string {
		q := make([]string, len(pats))
		for i, p := range pats {
			q[i] = fishQuote(p)
		}
		return strings.Join(q, " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s shell function for fish: %s; make it again with `%s shell-init fish`.\n", d.Name, generatedNote, d.Name)
	fmt.Fprintf(&b, "# Load it from ~/.config/fish/config.fish with: %s shell-init fish | source\n", d.Name)
	fmt.Fprintf(&b, "function %s --description %s\n", d.Name, fishQuote(fmt.Sprintf("%s; %s switch and %s new also change into the tree, %s remove out of one it removed", d.Name, d.Name, d.Name, d.Name)))
	b.WriteString("    set -l word ''\n    set -l skip 0\n")
	b.WriteString("    for arg in $argv\n        if test $skip = 1\n            set skip 0\n            continue\n        end\n")
	b.WriteString("        switch $arg\n")
	fmt.Fprintf(&b, "            case %s\n                set word ''\n                break\n", fq(g.passThrough))
	b.WriteString("            case '--'\n                break\n")
	if len(g.withValue) > 0 {
		fmt.Fprintf(&b, "            case %s\n                set skip 1\n", fq(g.withValue))
	}
	if len(g.alone) > 0 {
		fmt.Fprintf(&b, "            case %s\n", fq(g.alone))
	}
	b.WriteString("            case '-*'\n                if test -z \"$word\"\n                    break\n                end\n")
	b.WriteString("            case '*'\n                if test -z \"$word\"\n                    set word $arg\n                end\n")
	b.WriteString("        end\n    end\n")
	fmt.Fprintf(&b, "    if not contains -- \"$word\" switch new remove\n        command %s $argv\n        return $status\n    end\n", d.Name)
	fmt.Fprintf(&b, "    set -l out (%s=fish command %s $argv | string collect -N)\n", shellFunctionEnv, d.Name)
	b.WriteString("    set -l rc $pipestatus[1]\n")
	b.WriteString("    if test \"$word\" = new\n        printf '%s' $out\n    end\n")
	b.WriteString("    if test \"$word\" = remove\n        if test -n \"$out\"\n")
	b.WriteString("            set -l dir (string split -r -m1 \\n -- $out)\n            cd -- $dir[1]\n        end\n")
	b.WriteString("        return $rc\n    end\n")
	b.WriteString("    if test $rc -ne 0\n        return $rc\n    end\n")
	b.WriteString("    if test -z \"$out\"\n        return 0\n    end\n")
	b.WriteString("    set -l dir (string split -r -m1 \\n -- $out)\n")
	b.WriteString("    cd -- $dir[1]\nend\n")
	return b.String()
}

// shellInits are the function generators, by shell.
func shellInits() map[string]func(cliDoc) string {
	return map[string]func(cliDoc) string{
		"bash": func(d cliDoc) string { return shellInitPOSIX(d, "bash", "~/.bashrc") },
		"zsh":  func(d cliDoc) string { return shellInitPOSIX(d, "zsh", "~/.zshrc") },
		"fish": shellInitFish,
	}
}
