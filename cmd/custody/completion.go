package main

import (
	"fmt"
	"slices"
	"strings"
)

// compPath is what completion knows at one command path: its
// subcommands, the flags it takes (globals and its ancestors' included),
// and its positional arguments.
type compPath struct {
	Path  string
	Subs  []cmdDoc
	Flags []flagDoc
	Args  []argDoc
}

// completionPaths is every command path of d, the root ("") first, each
// with everything completion offers there.
func completionPaths(d cliDoc) []compPath {
	out := []compPath{{Path: "", Subs: d.Commands, Flags: d.Globals}}
	var walk func(cmds []cmdDoc, inherited []flagDoc)
	walk = func(cmds []cmdDoc, inherited []flagDoc) {
		for _, c := range cmds {
			flags := append(slices.Clip(inherited), c.Flags...)
			sortFlags(flags)
			out = append(out, compPath{Path: c.Path, Subs: c.Children, Flags: flags, Args: c.Args})
			walk(c.Children, flags)
		}
	}
	walk(d.Commands, d.Globals)
	return out
}

// longSpellings is every long form of the flags: --name, and --no-name
// for a negatable one.
func longSpellings(fs []flagDoc) []string {
	var out []string
	for _, f := range fs {
		out = append(out, "--"+f.Name)
		if f.Negatable {
			out = append(out, "--no-"+f.Name)
		}
	}
	return out
}

// spellings is every way f is written on the command line.
func (f flagDoc) spellings() []string {
	out := []string{"--" + f.Name}
	if f.Short != 0 {
		out = append(out, "-"+string(f.Short))
	}
	return out
}

// shQuote quotes s as one POSIX shell word.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shPatterns joins quoted case patterns with |.
func shPatterns(pats []string) string {
	q := make([]string, len(pats))
	for i, p := range pats {
		q[i] = shQuote(p)
	}
	return strings.Join(q, "|")
}

// shWalk is the part of the bash and zsh scripts that reads the words
// before the cursor into cmd (the command path), npos (positional
// arguments seen), skip (set when the last word is a flag waiting for
// its value) and flag (that flag). A lone "=" after such a flag is bash
// splitting --flag=value at COMP_WORDBREAKS: the value is still to come. first is the index of the first word after the binary's.
func shWalk(d cliDoc, words, first, last string) string {
	var b strings.Builder
	paths := completionPaths(d)
	fmt.Fprintf(&b, "    for ((i = %s; i < %s; i++)); do\n", first, last)
	fmt.Fprintf(&b, "        w=\"${%s[i]}\"\n", words)
	b.WriteString("        if [[ -n $skip ]]; then\n            if [[ $w != = ]]; then\n                skip=\"\"\n")
	if c, ok := chdirFlag(d); ok {
		fmt.Fprintf(&b, "                case \"$flag\" in %s) chdir=\"$w\" ;; esac\n", shPatterns(c.spellings()))
	}
	b.WriteString("            fi\n            continue\n        fi\n")
	b.WriteString("        case \"$w\" in\n")
	if c, ok := chdirFlag(d); ok {
		fmt.Fprintf(&b, "        %s*) chdir=\"${w#%s}\"; continue ;;\n", shQuote("--"+c.Name+"="), shQuote("--"+c.Name+"="))
		if c.Short != 0 {
			fmt.Fprintf(&b, "        %s?*) chdir=\"${w#%s}\"; continue ;;\n", shQuote("-"+string(c.Short)), shQuote("-"+string(c.Short)))
		}
	}
	b.WriteString("        --*=*) continue ;;\n        -?*)\n            case \"$cmd|$w\" in\n")
	for _, p := range paths {
		var pats []string
		for _, f := range p.Flags {
			if f.Takes() {
				for _, s := range f.spellings() {
					pats = append(pats, p.Path+"|"+s)
				}
			}
		}
		if len(pats) > 0 {
			fmt.Fprintf(&b, "            %s) skip=1 flag=\"$w\" ;;\n", shPatterns(pats))
		}
	}
	b.WriteString("            esac\n            continue ;;\n        esac\n")
	var subs []string
	for _, p := range paths {
		for _, s := range p.Subs {
			subs = append(subs, p.Path+"/"+s.Name)
		}
	}
	b.WriteString("        case \"$cmd/$w\" in\n")
	if len(subs) > 0 {
		fmt.Fprintf(&b, "        %s) cmd=\"${cmd:+$cmd }$w\" ;;\n", shPatterns(subs))
	}
	b.WriteString("        *) npos=$((npos + 1)) ;;\n        esac\n    done\n")
	return b.String()
}

// shCandidates writes the case arms that set the candidate words: the
// values of the flag waiting for one, the flags when the word starts with
// -, the subcommands, then a positional argument's values: its enum, or
// the words of its complete tag, which the binary prints (shWords).
// reply(words) is the shell code that offers words and returns; replySubs, when set,
// offers subcommands instead (with their help); none is what
// is done when there is nothing to offer (files).
func shCandidates(b *strings.Builder, d cliDoc, reply func(words []string) string, replySubs func(subs []cmdDoc) string, none string) {
	paths := completionPaths(d)
	b.WriteString("    if [[ -n $skip ]]; then\n        case \"$cmd|$flag\" in\n")
	for _, p := range paths {
		for _, f := range p.Flags {
			if f.Takes() && (len(f.Enum) > 0 || f.Complete != "") {
				var pats []string
				for _, s := range f.spellings() {
					pats = append(pats, p.Path+"|"+s)
				}
				offer := reply(f.Enum)
				if len(f.Enum) == 0 {
					offer = shWords(d, f.Complete)
				}
				fmt.Fprintf(b, "        %s) %s ;;\n", shPatterns(pats), offer)
			}
		}
	}
	fmt.Fprintf(b, "        esac\n        %s\n    fi\n", none)
	b.WriteString("    if [[ $cur == -* ]]; then\n        case \"$cmd\" in\n")
	for _, p := range paths {
		fmt.Fprintf(b, "        %s) %s ;;\n", shQuote(p.Path), reply(longSpellings(p.Flags)))
	}
	fmt.Fprintf(b, "        esac\n        %s\n    fi\n", none)
	b.WriteString("    case \"$cmd\" in\n")
	for _, p := range paths {
		if len(p.Subs) > 0 {
			offer := replySubs
			if offer == nil {
				offer = func(subs []cmdDoc) string {
					names := make([]string, len(subs))
					for i, s := range subs {
						names[i] = s.Name
					}
					return reply(names)
				}
			}
			fmt.Fprintf(b, "    %s) %s ;;\n", shQuote(p.Path), offer(p.Subs))
		}
	}
	b.WriteString("    esac\n    case \"$cmd|$npos\" in\n")
	for _, p := range paths {
		for i, a := range p.Args {
			pat := shQuote(fmt.Sprintf("%s|%d", p.Path, i))
			switch {
			case len(a.Enum) > 0:
				fmt.Fprintf(b, "    %s) %s ;;\n", pat, reply(a.Enum))
			case a.Complete != "" && a.Repeated:
				// Every word from i on: the arguments before it (kong puts
				// a repeated one last) each get their own arm first.
				for j := range i {
					if len(p.Args[j].Enum) == 0 && p.Args[j].Complete == "" {
						fmt.Fprintf(b, "    %s) %s ;;\n", shQuote(fmt.Sprintf("%s|%d", p.Path, j)), none)
					}
				}
				fmt.Fprintf(b, "    %s*) %s ;;\n", shQuote(p.Path+"|"), shWords(d, a.Complete))
			case a.Complete != "":
				fmt.Fprintf(b, "    %s) %s ;;\n", pat, shWords(d, a.Complete))
			}
		}
	}
	fmt.Fprintf(b, "    esac\n    %s\n", none)
}

// chdirFlag is the global flag that names the directory custody runs in
// (-C, --chdir): completion passes its value on when it asks the binary
// for words.
func chdirFlag(d cliDoc) (flagDoc, bool) {
	for _, f := range d.Globals {
		if f.Name == "chdir" {
			return f, true
		}
	}
	return flagDoc{}, false
}

// shWords is the bash and zsh code that offers the words of kind, which
// the binary prints (custody __complete -z KIND), and returns.
func shWords(d cliDoc, kind string) string {
	return "_" + d.Name + "_words " + shQuote(kind) + "; return"
}

// shWordsFunc is the bash or zsh function behind shWords: it runs the
// binary (command, so a shell function of the same name is passed by) in
// the directory -C named on the line, waiting at most a second for a
// custody that holds the state file, reads its NUL-ended words, and
// offers them by offer (code that reads the array cands).
func shWordsFunc(d cliDoc, offer string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "_%s_words() {\n", d.Name)
	b.WriteString("    local w\n    local -a cdir=() cands=()\n")
	if c, ok := chdirFlag(d); ok {
		fmt.Fprintf(&b, "    [[ -n $chdir ]] && cdir=(%s \"$chdir\")\n", shQuote("--"+c.Name))
	}
	fmt.Fprintf(&b, "    while IFS= read -r -d '' w; do\n        cands+=(\"$w\")\n    done < <(command %s \"${cdir[@]}\" --lock-timeout=1s __complete -z \"$1\" 2>/dev/null)\n", d.Name)
	b.WriteString(offer)
	b.WriteString("}\n")
	return b.String()
}

// bashCompletion is custody's bash completion script.
func bashCompletion(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s: %s; make it again with `%s completion bash`.\n", d.Name, generatedNote, d.Name)
	fmt.Fprintf(&b, "# Load it with: source <(%s completion bash)\n", d.Name)
	fmt.Fprintf(&b, "_%s() {\n", d.Name)
	b.WriteString("    local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd=\"\" w=\"\" i skip=\"\" flag=\"\" npos=0 chdir=\"\"\n")
	b.WriteString("    COMPREPLY=()\n")
	b.WriteString(shWalk(d, "COMP_WORDS", "1", "COMP_CWORD"))
	shCandidates(&b, d, func(words []string) string {
		return "COMPREPLY=($(compgen -W " + shQuote(strings.Join(words, " ")) + " -- \"$cur\")); return"
	}, nil, "return")
	b.WriteString("}\n")
	// The words that start with what is typed; bash offers them as they are.
	b.WriteString(shWordsFunc(d, "    for w in \"${cands[@]}\"; do\n        [[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\")\n    done\n    return 0\n"))
	fmt.Fprintf(&b, "complete -o default -F _%s %s\n", d.Name, d.Name)
	return b.String()
}

// zshCompletion is custody's zsh completion script: the same walk as
// bash's, offering subcommands with their help (_describe), other words
// with compadd, and _files where a file goes.
func zshCompletion(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n", d.Name)
	fmt.Fprintf(&b, "# zsh completion for %s: %s; make it again with `%s completion zsh`.\n", d.Name, generatedNote, d.Name)
	fmt.Fprintf(&b, "# Load it with: source <(%s completion zsh), or put it in your fpath as _%s.\n", d.Name, d.Name)
	fmt.Fprintf(&b, "_%s() {\n", d.Name)
	b.WriteString("    local cur=\"${words[CURRENT]}\" cmd=\"\" w=\"\" i skip=\"\" flag=\"\" npos=0 chdir=\"\"\n")
	b.WriteString(shWalk(d, "words", "2", "CURRENT"))
	shCandidates(&b, d, func(words []string) string {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = shQuote(w)
		}
		return "compadd -- " + strings.Join(q, " ") + "; return"
	}, func(subs []cmdDoc) string {
		q := make([]string, len(subs))
		for i, s := range subs {
			q[i] = shQuote(s.Name + ":" + s.Help)
		}
		return "local -a subs=(" + strings.Join(q, " ") + "); _describe -t commands command subs; return"
	}, "_files; return")
	b.WriteString("}\n")
	// zsh filters by what is typed itself.
	b.WriteString(shWordsFunc(d, "    compadd -- \"${cands[@]}\"\n"))
	fmt.Fprintf(&b, "if [[ \"${funcstack[1]}\" == _%s ]]; then\n    _%s \"$@\"\nelse\n    compdef _%s %s\nfi\n", d.Name, d.Name, d.Name, d.Name)
	return b.String()
}

// fishQuote quotes s as one fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// fishCompletion is custody's fish completion script.
func fishCompletion(d cliDoc) string {
	var b strings.Builder
	bin := d.Name
	paths := completionPaths(d)
	fmt.Fprintf(&b, "# fish completion for %s: %s; make it again with `%s completion fish`.\n", bin, generatedNote, bin)
	fmt.Fprintf(&b, "# Load it with: %s completion fish | source\n", bin)
	fmt.Fprintf(&b, "function __%s_value_flag\n    switch \"$argv[1]|$argv[2]\"\n", bin)
	var vals []string
	for _, p := range paths {
		for _, f := range p.Flags {
			if f.Takes() {
				for _, s := range f.spellings() {
					vals = append(vals, fishQuote(p.Path+"|"+s))
				}
			}
		}
	}
	if len(vals) > 0 {
		fmt.Fprintf(&b, "        case %s\n            return 0\n", strings.Join(vals, " "))
	}
	b.WriteString("    end\n    return 1\nend\n")
	fmt.Fprintf(&b, "function __%s_cmd\n    set -l words (commandline -opc)\n    set -e words[1]\n    set -l cmd ''\n    set -l skip 0\n", bin)
	b.WriteString("    for w in $words\n        if test $skip = 1\n            set skip 0\n            continue\n        end\n")
	fmt.Fprintf(&b, "        switch $w\n            case '--*=*'\n                continue\n            case '-*'\n                if __%s_value_flag \"$cmd\" $w\n                    set skip 1\n                end\n                continue\n        end\n", bin)
	var subs []string
	for _, p := range paths {
		for _, s := range p.Subs {
			subs = append(subs, fishQuote(p.Path+"/"+s.Name))
		}
	}
	b.WriteString("        switch \"$cmd/$w\"\n")
	if len(subs) > 0 {
		fmt.Fprintf(&b, "            case %s\n                set cmd (string trim -- \"$cmd $w\")\n", strings.Join(subs, " "))
	}
	b.WriteString("        end\n    end\n    echo $cmd\nend\n")
	fmt.Fprintf(&b, "function __%s_at\n    set -l c (__%s_cmd)\n    test \"$c\" = \"$argv[1]\"\nend\n", bin, bin)
	b.WriteString(fishWordsFunc(d))
	fmt.Fprintf(&b, "complete -c %s -f\n", bin)
	for _, p := range paths {
		cond := fishQuote(fmt.Sprintf("__%s_at %s", bin, fishQuote(p.Path)))
		for _, s := range p.Subs {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", bin, cond, fishQuote(s.Name), fishQuote(s.Help))
		}
		for _, f := range p.Flags {
			line := fmt.Sprintf("complete -c %s -n %s -l %s", bin, cond, f.Name)
			if f.Short != 0 {
				line += " -s " + string(f.Short)
			}
			if f.Takes() {
				line += " -r"
				if len(f.Enum) > 0 {
					line += " -x -a " + fishQuote(strings.Join(f.Enum, " "))
				} else if f.Complete != "" {
					line += " -x -a " + fishQuote(fishWords(d, f.Complete))
				} else {
					line += " -F"
				}
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, fishQuote(f.Help))
			if f.Negatable {
				fmt.Fprintf(&b, "complete -c %s -n %s -l %s -d %s\n", bin, cond, "no-"+f.Name, fishQuote(f.Help))
			}
		}
		for _, a := range p.Args {
			if len(a.Enum) > 0 {
				fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", bin, cond, fishQuote(strings.Join(a.Enum, " ")), fishQuote(a.Help))
			} else if a.Complete != "" {
				fmt.Fprintf(&b, "complete -c %s -n %s -a %s\n", bin, cond, fishQuote(fishWords(d, a.Complete)))
			} else if len(p.Subs) == 0 {
				fmt.Fprintf(&b, "complete -c %s -n %s -F\n", bin, cond)
			}
		}
	}
	return b.String()
}

// fishWords is the fish command substitution that offers the words of
// kind (fishWordsFunc).
func fishWords(d cliDoc, kind string) string {
	return "(__" + d.Name + "_words " + fishQuote(kind) + ")"
}

// fishWordsFunc is the fish function behind fishWords: it runs the binary
// (command, so a function of the same name is passed by) in the directory
// -C named on the line, waiting at most a second for the state file, and
// prints its NUL-ended words one per line (a
// word never holds a newline: ids, branch and archive names).
func fishWordsFunc(d cliDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "function __%s_words\n    set -l cdir\n", d.Name)
	if c, ok := chdirFlag(d); ok {
		b.WriteString("    set -l words (commandline -opc)\n    set -l n (count $words)\n")
		b.WriteString("    for i in (seq 2 $n)\n        switch $words[$i]\n")
		fmt.Fprintf(&b, "            case %s\n                if test $i -lt $n\n                    set cdir --%s $words[(math $i + 1)]\n                end\n", strings.Join(fishQuoteAll(c.spellings()), " "), c.Name)
		fmt.Fprintf(&b, "            case %s\n                set cdir --%s (string sub -s %d -- $words[$i])\n", fishQuote("--"+c.Name+"=*"), c.Name, len("--"+c.Name+"=")+1)
		if c.Short != 0 {
			fmt.Fprintf(&b, "            case %s\n                set cdir --%s (string sub -s 3 -- $words[$i])\n", fishQuote("-"+string(c.Short)+"?*"), c.Name)
		}
		b.WriteString("        end\n    end\n")
	}
	fmt.Fprintf(&b, "    command %s $cdir --lock-timeout=1s __complete -z $argv[1] 2>/dev/null | string split0\nend\n", d.Name)
	return b.String()
}

// fishQuoteAll quotes each of ss as one fish word.
func fishQuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fishQuote(s)
	}
	return out
}

// completionScripts are the completion generators, by shell.
func completionScripts() map[string]func(cliDoc) string {
	return map[string]func(cliDoc) string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}
}
