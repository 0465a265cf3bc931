<?php

declare(strict_types=1);

use Billing\Db\Connection;
use Billing\Http\WebhookController;
use Billing\Invoice\InvoiceRepository;

require __DIR__ . '/../vendor/autoload.php';

$config = require __DIR__ . '/../config.php';
$db = Connection::fromDsn($config['dsn'], $config['db_user'], $config['db_password']);

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);

switch ($path) {
    case '/webhooks/payment':
        $controller = new WebhookController(new InvoiceRepository($db), $config['webhook_secret']);
        $controller->handle(file_get_contents('php://input'), getallheaders());
        break;
    case '/health':
        // cheap liveness probe: one round trip, no query plan
        $db->query('SELECT 1');
        echo 'ok';
        break;
    default:
        http_response_code(404);
        echo 'not found';
}
