package model_test

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

func TestAgeWordsSpellsOneUnitRoundedDown(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{59*time.Minute + 59*time.Second, "59m"},
		{time.Hour, "1h"},
		{47*time.Hour + 59*time.Minute, "47h"},
		{48 * time.Hour, "2d"},
		{400 * 24 * time.Hour, "400d"},
	} {
		if got := model.AgeWords(c.d); got != c.want {
			t.Errorf("AgeWords(%v) = %q; want %q", c.d, got, c.want)
		}
	}
}
