// Command lcwrap-otelcol is a minimal OpenTelemetry Collector distribution
// for shipping lcwrap journals: it holds only the components that
// ../config.yaml uses, plus the OTLP exporters a real deployment swaps in
// for the demo's file exporter. It is an example, not part of lcwrap; it
// lives in its own Go module so that lcwrap's go.mod stays small.
//
// Build it with `go build -o lcwrap-otelcol .` in this directory and run it
// with `lcwrap-otelcol --config ../config.yaml`.
package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"

	"github.com/lcwrap/lcwrap/examples/otel-collector/collector/receivetime"
)

// version names this distribution, not lcwrap: the collector release it is
// built from is pinned in go.mod.
const version = "0.165.1-lcwrap"

func components() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error

	// file_log tails the journal; its stanza operators do all the parsing
	// and mapping, so the distribution needs no processor.
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		filelogreceiver.NewFactory(),
		otlpreceiver.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		receivetime.NewFactory(),
	); err != nil {
		return f, err
	}
	// file for the demo, debug for looking at records by eye, otlp_grpc and
	// otlp_http for shipping to a real backend.
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		fileexporter.NewFactory(),
		debugexporter.NewFactory(),
		otlpexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
	); err != nil {
		return f, err
	}
	// file_storage keeps the receiver's read offsets across restarts.
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		filestorage.NewFactory(),
	); err != nil {
		return f, err
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	return f, nil
}

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "lcwrap-otelcol",
			Description: "OpenTelemetry Collector with the components that ship lcwrap journals",
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
				},
				DefaultScheme: "env",
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "lcwrap-otelcol:", err)
		os.Exit(1)
	}
}
