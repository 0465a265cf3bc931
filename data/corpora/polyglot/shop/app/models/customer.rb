# frozen_string_literal: true

class Customer < ApplicationRecord
  has_many :orders, dependent: :restrict_with_error

  validates :email, presence: true, format: { with: URI::MailTo::EMAIL_REGEXP }

  scope :subscribed, -> { where(newsletter: true) }

  # Lifetime value in cents. Avoid find_by_sql here: the scope below keeps it
  # composable with the admin filters (see Admin::CustomersController#index).
  scope :with_lifetime_value, lambda {
    left_joins(:orders)
      .where(orders: { state: %w[paid roasted shipped] })
      .group(:id)
      .select("customers.*, COALESCE(SUM(orders.total_cents), 0) AS lifetime_cents")
  }

  def display_name
    [first_name, last_name].compact_blank.join(" ").presence || email
  end

  def locale
    self[:locale].presence || I18n.default_locale.to_s
  end

  def anonymize!
    update!(
      email: "deleted-#{id}@kaffeekontor.invalid",
      first_name: nil,
      last_name: nil,
      street: nil,
      newsletter: false
    )
  end
end
