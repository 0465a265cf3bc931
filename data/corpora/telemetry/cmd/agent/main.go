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
	debug    = flag.Bool("debug", false, "print samples instead of exporting them")
)

func main() {
	flag.Parse()
	host, err := os.Hostname()
	if err != nil {
		log.Fatalf("hostname: %v", err)
	}
	logger := collector.NewLogger(host)
	c := collector.New("/proc", logger)
	exp := export.NewExporter(os.Getenv("INGEST_URL"), "agent", os.Getenv("INGEST_PASSWORD"))

	fmt.Printf("telemetry agent on %s, every %s\n", host, *interval)
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
