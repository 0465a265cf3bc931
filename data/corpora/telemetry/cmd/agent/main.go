package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"example.com/telemetry/internal/collector"
	"example.com/telemetry/internal/export"
)

var (
	interval = flag.Duration("interval", 15*time.Second, "time between collections")
	debug    = flag.Bool("debug", false, "print samples with fmt.Printf() instead of exporting them")
	legacy   = flag.Bool("legacy", false, "Deprecated: export to the v1 endpoint (switched off this quarter)")
	v1URL    = flag.String("v1-url", "", "Deprecated: address of the v1 endpoint; ignored unless -legacy")
)

func main() {
	flag.Parse()
	host, err := os.Hostname()
	if err != nil {
		log.Fatalf("hostname: %v", err)
	}
	if *v1URL != "" && !*legacy {
		fmt.Fprintln(os.Stderr, "-v1-url has no effect without -legacy")
		os.Exit(2)
	}
	logger := collector.NewLogger(host)
	c := collector.New("/proc", logger)
	// INGEST_URL and INGEST_PASSWORD come from the systemd unit's EnvironmentFile.
	url := os.Getenv("INGEST_URL")
	if url == "" {
		logger.Errorf("INGEST_URL is not set")
		os.Exit(1)
	}
	exp := export.NewExporter(url, "agent", os.Getenv("INGEST_PASSWORD"))

	fmt.Printf("telemetry agent on %s, every %s (legacy=%t)\n",
		host, *interval,
		*legacy)
	// TODO(lena): reload the metric list on SIGHUP instead of restarting
	names := []string{"loadavg", "meminfo", "stat"}
	for range time.Tick(*interval) {
		samples, err := c.ReadAll(names)
		if err != nil {
			log.Printf("collect: %v", err)
			continue
		}
		if *debug {
			collector.Debug(samples)
			continue
		}
		if err := exp.Send(samples); err != nil {
			log.Printf("export: %v", err)
		}
	}
}
