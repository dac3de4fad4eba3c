package observe

import "context"

// ScanProcesses reads every process's files with lsof once (see
// LsofScanner.Scan): darwin has no proc file system.
func ScanProcesses() *Processes { return LsofScanner{}.Scan(context.Background()) }
