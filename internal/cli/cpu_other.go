//go:build !unix

package cli

import "time"

// processCPU is not measured here: the bench then reports no CPU per call.
func processCPU() time.Duration { return 0 }
