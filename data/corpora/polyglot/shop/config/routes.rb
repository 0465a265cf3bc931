Rails.application.routes.draw do
  resources :orders, only: %i[index show create] do
    member do
      post :cancel
    end
  end

  resource :coupon, only: %i[create destroy]

  namespace :admin do
    resources :orders, only: %i[index update]
    resources :customers, only: %i[index show]
  end

  get "up" => "rails/health#show", as: :rails_health_check
  root "orders#index"
end
