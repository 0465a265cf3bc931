<?php
/*
 * Plain receipt from billing v1, still sent for invoices paid by bank transfer.
 * Rendered with include, so the variables come from the caller's scope.
 *
 * @var string $customerName
 * @var string $invoiceNumber
 * @var string $amount
 */
?>
Hallo <?= $customerName ?>,

wir haben Ihre Zahlung zur Rechnung <?= $invoiceNumber ?> über <?= $amount ?> erhalten.

Vielen Dank!
Ihr Kaffeekontor
