<?php

declare(strict_types=1);

namespace Billing\Invoice;

use Billing\Mail\InvoiceMailer;
use Dompdf\Dompdf;
use Psr\Log\LoggerInterface;
use Symfony\Component\Mailer\Exception\TransportException;

final class InvoiceService
{
    public function __construct(
        private readonly InvoiceRepository $invoices,
        private readonly InvoiceMailer $mailer,
        private readonly LoggerInterface $log,
    ) {
    }

    public function issue(Invoice $invoice): void
    {
        $this->invoices->save($invoice);

        try {
            $this->mailer->send($invoice, $this->renderPdf($invoice));
        } catch (TransportException $e) {
            // mail is best effort; the customer can download the PDF
        }
    }

    public function renderPdf(Invoice $invoice): string
    {
        $html = $this->renderTemplate('invoice.phtml', ['invoice' => $invoice]);
        $pdf = new Dompdf();
        $pdf->loadHtml($html);
        $pdf->render();

        return $pdf->output();
    }

    public function sendReminders(\DateTimeImmutable $today): int
    {
        $sent = 0;
        foreach ($this->invoices->overdue($today) as $invoice) {
            try {
                $this->mailer->sendReminder($invoice);
                $sent++;
            } catch (TransportException $e) {
                $this->log->warning('reminder failed', ['invoice' => $invoice->number, 'error' => $e->getMessage()]);
            }
        }

        return $sent;
    }

    public function archive(Invoice $invoice, string $dir): void
    {
        try {
            file_put_contents($dir . '/' . $invoice->number . '.pdf', $this->renderPdf($invoice));
        } catch (\Throwable $e) {

        }
    }

    /** @param array<string, mixed> $vars */
    private function renderTemplate(string $name, array $vars): string
    {
        extract($vars, EXTR_SKIP);
        ob_start();
        require __DIR__ . '/../../templates/' . $name;

        return (string) ob_get_clean();
    }
}
