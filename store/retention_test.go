package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// The readers of a retention value, for the CLI's flags and the tenants file alike.
func TestParseRetention(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		bad  string // what the error says, "" when there is none
	}{
		{"0", 0, ""}, {"100000", 100000, ""}, {"unlimited", store.Unlimited, ""},
		{"-1", 0, "give a number of runs"}, {"lots", 0, "give a number of runs"}, {"", 0, "give a number of runs"}, {"720h", 0, "give a number of runs"},
	} {
		got, err := store.ParseMaxRuns(c.in)
		if (err == nil) != (c.bad == "") || (err != nil && !strings.Contains(err.Error(), c.bad)) || (err == nil && got != c.want) {
			t.Errorf("ParseMaxRuns(%q) = %d, %v; want %d, %q", c.in, got, err, c.want, c.bad)
		}
	}
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  string
	}{
		{"0", 0, ""}, {"720h", 720 * time.Hour, ""}, {"90d", 90 * 24 * time.Hour, ""}, {"1d12h", 36 * time.Hour, ""},
		{"1m", time.Minute, ""}, {"unlimited", store.Unlimited, ""},
		{"-1h", 0, "give a duration"}, {"soon", 0, "give a duration"}, {"", 0, "give a duration"}, {"100", 0, "give a duration"},
		{"36501d", 0, "give a duration"}, {"10s", 0, "10s is less than 1m0s"},
	} {
		got, err := store.ParseMaxAge(c.in)
		if (err == nil) != (c.bad == "") || (err != nil && !strings.Contains(err.Error(), c.bad)) || (err == nil && got != c.want) {
			t.Errorf("ParseMaxAge(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.bad)
		}
	}
	if _, err := store.ParseMaxAge("59s"); !errors.Is(err, store.ErrMaxAgeTooShort) {
		t.Errorf("ParseMaxAge(59s) = %v, want ErrMaxAgeTooShort", err)
	}
}
