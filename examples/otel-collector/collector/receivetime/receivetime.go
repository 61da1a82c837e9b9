// Package receivetime is a logs processor for the gateway Collector of an
// lcwrap fleet: it stamps every log record it passes on with the moment
// the gateway received it, as an integer attribute (Unix nanoseconds on
// the gateway's clock). lcwrap's fleet readers use it as "last heard" and,
// against the host's own read time (the file_log receiver's observed
// timestamp), to separate a host's clock skew from its shipping delay.
//
// It exists because the contrib transform processor (which could do the
// same with `set(attributes[...], UnixNano(Now()))`) cannot be built from
// the Go module proxy at v0.165: a package it imports,
// pkg/expohisto, is not served there ("403 This module version is not
// available"). This processor is a dozen lines of pdata and pulls in
// nothing beyond the Collector's core modules.
//
// It is synchronous and never fails: the records go on to the next
// consumer in the same call, so the OTLP receiver answers the agent only
// once the exporter behind it has taken them.
package receivetime

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// DefaultAttribute is the attribute the receive time is written to.
const DefaultAttribute = "lcwrap.gateway.received_time_unix_nano"

// Config names the attribute.
type Config struct {
	// Attribute is the log record attribute that gets the receive time,
	// an int of Unix nanoseconds; an existing value is replaced.
	Attribute string `mapstructure:"attribute"`
}

// Validate refuses an empty attribute name.
func (c *Config) Validate() error {
	if c.Attribute == "" {
		return errors.New("attribute must not be empty")
	}
	return nil
}

// NewFactory returns the factory of the lcwrap_receive_time processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		component.MustNewType("lcwrap_receive_time"),
		func() component.Config { return &Config{Attribute: DefaultAttribute} },
		processor.WithLogs(createLogs, component.StabilityLevelDevelopment),
	)
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	attr := cfg.(*Config).Attribute
	now := time.Now // the gateway's clock
	return processorhelper.NewLogs(ctx, set, cfg, next,
		func(_ context.Context, ld plog.Logs) (plog.Logs, error) {
			Stamp(ld, attr, now())
			return ld, nil
		},
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

// Stamp sets attr to at (Unix nanoseconds) on every record of ld.
func Stamp(ld plog.Logs, attr string, at time.Time) {
	ns := at.UnixNano()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lrs.At(k).Attributes().PutInt(attr, ns)
			}
		}
	}
}
