package receivetime

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Every record of every resource and scope gets the stamp, an existing
// value is replaced, and nothing else changes.
func TestStamp(t *testing.T) {
	ld := plog.NewLogs()
	for range 2 {
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		for range 3 {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr("a journal line")
			lr.Attributes().PutInt(DefaultAttribute, 1)
		}
	}
	at := time.Date(2026, 11, 30, 14, 0, 0, 123, time.UTC)
	Stamp(ld, DefaultAttribute, at)
	n := 0
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		lrs := ld.ResourceLogs().At(i).ScopeLogs().At(0).LogRecords()
		for j := 0; j < lrs.Len(); j++ {
			v, ok := lrs.At(j).Attributes().Get(DefaultAttribute)
			if !ok || v.Int() != at.UnixNano() || lrs.At(j).Body().Str() != "a journal line" || lrs.At(j).Attributes().Len() != 1 {
				t.Fatalf("record %d/%d: %v %v", i, j, v.AsRaw(), ok)
			}
			n++
		}
	}
	if n != 6 {
		t.Fatalf("%d records", n)
	}
	if err := (&Config{}).Validate(); err == nil {
		t.Fatal("an empty attribute name is refused")
	}
}
