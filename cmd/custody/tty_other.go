//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// isTerminal reports false where custody cannot ask the terminal driver:
// no progress is shown there.
func isTerminal(*os.File) bool { return false }

// terminalSize is unknown where custody cannot ask the terminal driver.
func terminalSize(*os.File) (cols, rows int, ok bool) { return 0, 0, false }

// terminalColumns is 0 where custody cannot ask the terminal driver: the
// width is then COLUMNS, else 80.
func terminalColumns(*os.File) int { return 0 }
