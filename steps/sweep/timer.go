package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// Scheduler names the system service a sweep timer is written for.
type Scheduler string

// The schedulers custody writes timers for.
const (
	Systemd Scheduler = "systemd"
	Launchd Scheduler = "launchd"
)

// SchedulerFor is the scheduler of the system goos, false when custody
// writes no timer for it.
func SchedulerFor(goos string) (Scheduler, bool) {
	switch goos {
	case "linux":
		return Systemd, true
	case "darwin":
		return Launchd, true
	}
	return "", false
}

// Timer is a sweep timer as installed or removed: the scheduler, the
// files (absolute paths) and the command that turns it on or off.
type Timer struct {
	Scheduler Scheduler `json:"scheduler"`
	Files     []string  `json:"files"`
	// Next is the command a person runs to start (after install) or stop
	// (before uninstall) the timer in their scheduler; custody writes and
	// removes files only.
	Next string `json:"next"`
	// Changed says files were written or removed (false: they already
	// were as asked).
	Changed bool `json:"changed"`
}

// ErrNoTimerDir is the error of an environment that names no directory a
// scheduler reads timers from.
var ErrNoTimerDir = errors.New("neither XDG_CONFIG_HOME nor HOME is set to an absolute directory, so there is no user directory for the timer")

// timerDir is the directory sched reads a user's timers from:
// $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user), or
// ~/Library/LaunchAgents.
func timerDir(sched Scheduler, getenv func(string) string) (string, error) {
	home := getenv("HOME")
	switch sched {
	case Systemd:
		if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			return filepath.Join(x, "systemd", "user"), nil
		}
		if filepath.IsAbs(home) {
			return filepath.Join(home, ".config", "systemd", "user"), nil
		}
	case Launchd:
		if filepath.IsAbs(home) {
			return filepath.Join(home, "Library", "LaunchAgents"), nil
		}
	}
	return "", ErrNoTimerDir
}

// timerFiles are the files of e's repository's sweep timer for sched,
// running exe, with where they go.
func timerFiles(e *steps.Env, sched Scheduler, exe string, getenv func(string) string) (string, []machine.SweepTimerFile, error) {
	dir, err := timerDir(sched, getenv)
	if err != nil {
		return "", nil, err
	}
	name := machine.SweepTimerName(e.Repo.CommonDir)
	if sched == Launchd {
		f, err := machine.LaunchdSweepAgent(name, exe, e.Repo.MainCheckout)
		if err != nil {
			return "", nil, err
		}
		return dir, []machine.SweepTimerFile{f}, nil
	}
	return dir, machine.SystemdSweepUnits(name, exe, e.Repo.MainCheckout), nil
}

// InstallTimer writes the sweep timer of e's repository for sched, running
// exe (an absolute path), into the scheduler's user directory, each file
// written durably (steps.WriteFile). Files already holding exactly that
// content are left; a file there that custody did not write (it lacks
// custody's first line) is refused and left as it is.
func InstallTimer(e *steps.Env, sched Scheduler, exe string, getenv func(string) string) (Timer, error) {
	dir, files, err := timerFiles(e, sched, exe, getenv)
	if err != nil {
		return Timer{}, err
	}
	t := Timer{Scheduler: sched, Files: []string{}}
	// Every file is checked before any is written: a refusal changes
	// nothing.
	var write []machine.SweepTimerFile
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		t.Files = append(t.Files, p)
		old, err := os.ReadFile(p)
		switch {
		case err == nil && string(old) == f.Content:
			continue
		case err == nil && !ours(old):
			return t, fmt.Errorf("%s exists and custody did not write it; nothing was written (move it away, then run custody sweep --install-timer again)", p)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return t, err
		}
		write = append(write, f)
	}
	if len(write) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return t, err
		}
	}
	for _, f := range write {
		if err := steps.WriteFile(filepath.Join(dir, f.Name), []byte(f.Content), 0o644); err != nil {
			return t, err
		}
		t.Changed = true
	}
	t.Next = enableCommand(sched, files, dir)
	return t, nil
}

// UninstallTimer removes the sweep timer files of e's repository that
// custody wrote; a file there custody did not write is refused and left.
func UninstallTimer(e *steps.Env, sched Scheduler, getenv func(string) string) (Timer, error) {
	dir, files, err := timerFiles(e, sched, "custody", getenv)
	if err != nil {
		return Timer{}, err
	}
	t := Timer{Scheduler: sched, Files: []string{}}
	// Every file is checked before any is removed: a refusal changes
	// nothing.
	var remove []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		old, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return t, err
		case !ours(old):
			return t, fmt.Errorf("%s was not written by custody; nothing was removed (move it away, then run custody sweep --uninstall-timer again)", p)
		}
		remove = append(remove, p)
	}
	for _, p := range remove {
		if err := os.Remove(p); err != nil {
			return t, err
		}
		t.Files = append(t.Files, p)
		t.Changed = true
	}
	if err := steps.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	t.Next = disableCommand(sched, files, dir)
	return t, nil
}

// ours reports whether b is a timer file custody wrote: it carries
// custody's line in its first three lines.
func ours(b []byte) bool {
	head := b
	for i := 0; i < 3; i++ {
		if j := bytes.IndexByte(head, '\n'); j >= 0 {
			if bytes.Contains(head[:j], []byte("Written by custody sweep")) {
				return true
			}
			head = head[j+1:]
		}
	}
	return false
}

// enableCommand is what starts the timer once its files are written.
func enableCommand(sched Scheduler, files []machine.SweepTimerFile, dir string) string {
	if sched == Launchd {
		return machine.CommandOn([]string{"launchctl", "load", "-w"}, filepath.Join(dir, files[0].Name))
	}
	return "systemctl --user daemon-reload && " + machine.CommandOn([]string{"systemctl", "--user", "enable", "--now"}, files[1].Name)
}

// disableCommand is what stops the timer (run it before the files go, or
// after: the scheduler forgets a unit whose file is gone at its reload).
func disableCommand(sched Scheduler, files []machine.SweepTimerFile, dir string) string {
	if sched == Launchd {
		return machine.CommandOn([]string{"launchctl", "unload", "-w"}, filepath.Join(dir, files[0].Name))
	}
	return machine.CommandOn([]string{"systemctl", "--user", "disable", "--now"}, files[1].Name) + " ; systemctl --user daemon-reload"
}
