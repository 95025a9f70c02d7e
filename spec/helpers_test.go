package spec_test

import "time"

// simple returns a minimal valid manifest for id with extra JSON fields spliced in.
func simple(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// measure runs f n times and returns ns per call.
func measure(n int, f func()) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
