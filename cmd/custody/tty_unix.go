//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: the terminal driver answers
// for it (a character device such as /dev/null does not).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// terminalSize is the window size of the terminal f, in columns and rows,
// when the terminal knows it.
func terminalSize(f *os.File) (cols, rows int, ok bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 || ws.Row == 0 {
		return 0, 0, false
	}
	return int(ws.Col), int(ws.Row), true
}

// terminalColumns is how many columns the terminal f shows, as its driver
// says (TIOCGWINSZ); 0 when it does not say.
func terminalColumns(f *os.File) int {
	cols, _, _ := terminalSize(f)
	return cols
}
