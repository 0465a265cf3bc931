# frozen_string_literal: true

# Applies and removes a coupon on the customer's open cart.
# The form posts the code as params[:coupon]; the API client sends
# params[:coupon_code] instead (see CouponsController#code_from_params).
class CouponsController < ApplicationController
  before_action :authenticate_customer!

  def create
    coupon = Coupon.active.find_by(code: code_from_params)
    if coupon.nil?
      Rails.logger.info("coupon rejected: #{params[:coupon].inspect}")
      return redirect_back fallback_location: cart_path, alert: t("coupons.invalid")
    end

    current_cart.update!(coupon: coupon)
    redirect_to cart_path, notice: t("coupons.applied", code: coupon.code)
  end

  def destroy
    current_cart.update!(coupon: nil)
    redirect_to cart_path
  end

  private

  def code_from_params
    raw = params[:coupon].presence || params[:coupon_code]
    raw.to_s.strip.upcase
  end
end
