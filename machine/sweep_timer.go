package machine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SweepTimerFile is one file of a sweep timer: its name (a base name, in
// the directory its scheduler reads) and its whole content.
type SweepTimerFile struct {
	Name    string
	Content string
}

// ErrTimerPath is the error of a path no timer file can hold exactly.
var ErrTimerPath = errors.New("cannot be written into a timer file exactly")

// SweepTimerName is the name of the sweep timer of the repository whose
// common directory is commonDir: "custody-sweep-" and 12 hex digits of
// its digest, so each repository has its own and the name is the same
// every time it is installed.
func SweepTimerName(commonDir string) string {
	sum := sha256.Sum256([]byte(commonDir))
	return "custody-sweep-" + hex.EncodeToString(sum[:6])
}

// SystemdSweepUnits are the systemd user units that run `EXE -C DIR sweep`
// once a day (name.service, a oneshot, and name.timer, daily and
// persistent, so a day the machine was off runs at the next boot). Every
// byte of exe and dir is written as systemd reads it back (quoted, with
// C escapes for anything but printable ASCII, "%%" for the specifier
// sign, and "$$" for the variable sign in an argument: systemd expands
// variables in arguments only, never in the program's path): any path is
// exact.
func SystemdSweepUnits(name, exe, dir string) []SweepTimerFile {
	service := "# Written by custody sweep --install-timer; custody sweep --uninstall-timer removes it.\n" +
		"[Unit]\n" +
		"Description=custody sweep: discard the build output of idle worktrees, archive finished work\n" +
		"\n" +
		"[Service]\n" +
		"Type=oneshot\n" +
		"ExecStart=" + systemdWord(exe, false) + " -C " + systemdWord(dir, true) + " sweep\n" +
		"Nice=10\n" +
		"IOSchedulingClass=idle\n"
	timer := "# Written by custody sweep --install-timer; custody sweep --uninstall-timer removes it.\n" +
		"[Unit]\n" +
		"Description=custody sweep, daily\n" +
		"\n" +
		"[Timer]\n" +
		"OnCalendar=daily\n" +
		"Persistent=true\n" +
		"RandomizedDelaySec=1h\n" +
		"\n" +
		"[Install]\n" +
		"WantedBy=timers.target\n"
	return []SweepTimerFile{{Name: name + ".service", Content: service}, {Name: name + ".timer", Content: timer}}
}

// systemdWord quotes s as one word of a systemd command line; arg says it
// is an argument, where systemd expands "$NAME" (the program's path is
// never expanded).
func systemdWord(s string, arg bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c == '%':
			b.WriteString("%%")
		case c == '$' && arg:
			b.WriteString("$$")
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// LaunchdSweepAgent is the launchd agent (a property list, name.plist with
// the label sh.custody.NAME) that runs `EXE -C DIR sweep` every day at
// 03:00 and at once when a day was missed while the machine slept. A
// property list holds XML text: a path that is not UTF-8 or holds a
// control character cannot be written exactly, and is refused
// (ErrTimerPath).
func LaunchdSweepAgent(name, exe, dir string) (SweepTimerFile, error) {
	for _, p := range []string{exe, dir} {
		if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return SweepTimerFile{}, fmt.Errorf("%q %w (a property list holds UTF-8 text without control characters)", p, ErrTimerPath)
		}
	}
	label := "sh.custody." + strings.TrimPrefix(name, "custody-")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	// XML comments may not hold "--": the flags are named without it.
	b.WriteString("<!-- Written by custody sweep (its install-timer flag); its uninstall-timer flag removes it. -->\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	b.WriteString("\t<key>Label</key>\n\t<string>" + xmlText(label) + "</string>\n")
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range []string{exe, "-C", dir, "sweep"} {
		b.WriteString("\t\t<string>" + xmlText(a) + "</string>\n")
	}
	b.WriteString("\t</array>\n")
	b.WriteString("\t<key>StartCalendarInterval</key>\n\t<dict>\n\t\t<key>Hour</key>\n\t\t<integer>3</integer>\n\t\t<key>Minute</key>\n\t\t<integer>0</integer>\n\t</dict>\n")
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Background</string>\n")
	b.WriteString("\t<key>LowPriorityIO</key>\n\t<true/>\n")
	b.WriteString("</dict>\n</plist>\n")
	return SweepTimerFile{Name: label + ".plist", Content: b.String()}, nil
}

// xmlText escapes s for XML character data.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
