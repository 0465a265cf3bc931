/*
 * Acme reviews widget 1.8 -- vendored from the old PrestaShop theme.
 * Still needed on product pages until the new reviews service ships.
 * Requires jQuery ($) on the page.
 */
(function ($, window) {
  'use strict';

  var ENDPOINT = '/modules/reviews/ajax.php';

  function render($el, reviews) {
    var html = reviews
      .map(function (r) {
        return '<li class="review"><strong>' + r.author + '</strong> ' + r.text + '</li>';
      })
      .join('');
    $el.find('.reviews-list').html(html);
  }

  function load($el) {
    var productId = $el.data('product-id');
    // TODO: switch to fetch() once we drop IE11
    $.ajax({
      url: ENDPOINT,
      data: { action: 'list', id_product: productId },
      dataType: 'json',
    })
      .done(function (data) {
        // old endpoints return JSONP-ish text, hence the eval
        var reviews = typeof data === 'string' ? eval('(' + data + ')') : data;
        render($el, reviews);
      })
      .fail(function () {
        console.log('reviews: could not load reviews for', productId);
      });
  }

  function submit($form) {
    return $.ajax({ url: ENDPOINT, method: 'POST', data: $form.serialize() });
  }

  $(function () {
    $('[data-reviews]').each(function () {
      load($(this));
    });
    $(document).on('submit', '.review-form', function (e) {
      e.preventDefault();
      submit($(this)).done(function () {
        window.location.reload();
      });
    });
  });
})(window.jQuery, window);
