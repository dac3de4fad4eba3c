package observe

// ScanProcesses reads /proc once (see ProcScanner.Scan).
func ScanProcesses() *Processes { return ProcScanner{}.Scan() }
